import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import ipaddr from 'ipaddr.js';

/**
 * Where a webhook may go (docs/design.md §6, docs/webhooks.md "Destinations"): only to public unicast
 * addresses. Loopback, unspecified, private, link-local (with the cloud metadata address),
 * shared (100.64/10), multicast, broadcast and reserved ranges are refused, in IPv4 and IPv6,
 * and so are IPv4-mapped and IPv4-embedding IPv6 forms (::ffff:…, 64:ff9b::/96, 6to4, Teredo)
 * and IPv4 literals spelled any way but four decimal parts (`2130706433`, `0x7f000001`,
 * `0177.0.0.1`). ipaddr.js classifies the address (`range()`); everything but `unicast` is out.
 *
 * The one exemption is WEBHOOK_ALLOW_TARGETS: exact `host:port` pairs (local development, tests).
 */

/** Why a destination is refused (kept in the logs; the delivery stores only `destination_forbidden`). */
export type Refusal = { address: string; range: string } | { spelling: string };

/** Whether an address (an IP literal, no brackets) is refused, and why; null when it is a public unicast address. */
export function refusedAddress(address: string): Refusal | null {
  if (!ipaddr.isValid(address)) return { spelling: address };
  const parsed = ipaddr.parse(address);
  // Only a canonical four-part decimal IPv4 is an address; any other spelling of one is refused.
  if (parsed.kind() === 'ipv4' && !ipaddr.IPv4.isValidFourPartDecimal(address)) return { spelling: address };
  const range = parsed.range();
  return range === 'unicast' ? null : { address: parsed.toString(), range };
}

/** A URL's host as WHATWG parses it, without IPv6 brackets. */
const bareHost = (u: URL) => u.hostname.replace(/^\[(.*)\]$/, '$1');

/** The port a URL connects to (its own, or the scheme's). */
export const portOf = (u: URL): number => (u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80);

/** `host:port` of a URL as WEBHOOK_ALLOW_TARGETS spells it (IPv6 in brackets, lower case). */
export const targetOf = (u: URL): string => `${u.hostname.toLowerCase()}:${portOf(u)}`;

/** Parses WEBHOOK_ALLOW_TARGETS: comma-separated `host:port` pairs (blank entries ignored). */
export function parseAllowTargets(value: string): Set<string> {
  return new Set(
    value
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
}

/**
 * The host of the URL as it was written (before WHATWG URL canonicalises `http://2130706433/` to
 * 127.0.0.1), so a non-canonical spelling is refused even when it stands for a public address.
 */
function writtenHost(raw: string): string {
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#\\]*)/i.exec(raw.trim())?.[1] ?? '';
  const host = authority.slice(authority.lastIndexOf('@') + 1);
  return host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:\d*$/, '');
}

/** Resolves a name to every address it has (the DNS seam: tests may pass their own). */
export type Resolver = (host: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (host) =>
  new Promise((resolve, reject) => dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));

/** The verdict on a URL at registration. */
export type UrlVerdict = { ok: true } | { ok: false; refusal: Refusal };

/**
 * Registration's check of a webhook URL: an allow-listed `host:port` passes; an IP literal (as
 * written, and as parsed) must be public; a name must not resolve to any refused address. A name
 * that does not resolve (yet) passes: every delivery checks again and connects only to what it
 * checked. `resolveTimeoutMs` bounds the lookup (a slow answer passes the same way).
 */
export async function checkWebhookUrl(raw: string, opts: { allow: Set<string>; resolve?: Resolver; resolveTimeoutMs?: number }): Promise<UrlVerdict> {
  const u = new URL(raw);
  if (opts.allow.has(targetOf(u))) return { ok: true };
  const written = writtenHost(raw);
  if (written && ipaddr.isValid(written)) {
    const refusal = refusedAddress(written);
    if (refusal) return { ok: false, refusal };
  }
  const host = bareHost(u);
  if (ipaddr.isValid(host)) {
    const refusal = refusedAddress(host);
    return refusal ? { ok: false, refusal } : { ok: true };
  }
  let addresses: LookupAddress[];
  try {
    addresses = await withTimeout((opts.resolve ?? systemResolver)(host), opts.resolveTimeoutMs ?? 2000);
  } catch {
    return { ok: true };
  }
  for (const a of addresses) {
    const refusal = refusedAddress(a.address);
    if (refusal) return { ok: false, refusal };
  }
  return { ok: true };
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('lookup timed out')), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** The error a guarded lookup fails with: the connection is never attempted. */
export class DestinationForbiddenError extends Error {
  readonly code = 'EDESTINATIONFORBIDDEN';
  constructor(readonly refusal: Refusal) {
    super('webhook destination forbidden');
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request that resolves the name, checks every address it got and hands
 * the socket only those checked addresses: the connection goes to what was checked, so a name
 * that changes its answer between the check and the connect (DNS rebinding) gains nothing. Any
 * refused address fails the whole lookup with DestinationForbiddenError.
 */
export function guardedLookup(resolve: Resolver) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    const host = hostname.replace(/^\[(.*)\]$/, '$1');
    const resolved: Promise<LookupAddress[]> = ipaddr.isValid(host)
      ? Promise.resolve([{ address: host, family: host.includes(':') ? 6 : 4 }])
      : resolve(host);
    resolved.then(
      (addresses) => {
        const wanted = addresses.filter((a) => !options.family || a.family === options.family);
        if (wanted.length === 0) {
          callback(Object.assign(new Error(`no address for ${host}`), { code: 'ENOTFOUND' }), []);
          return;
        }
        for (const a of wanted) {
          const refusal = refusedAddress(a.address);
          if (refusal) {
            callback(new DestinationForbiddenError(refusal), []);
            return;
          }
        }
        if (options.all) callback(null, wanted);
        else callback(null, wanted[0]!.address, wanted[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, []),
    );
  };
}

/**
 * The delivery-time check of a URL whose host is an IP literal (Node connects to a literal
 * without calling `lookup`): null when it may be connected to.
 */
export function refusedLiteral(u: URL): Refusal | null {
  const host = bareHost(u);
  return ipaddr.isValid(host) ? refusedAddress(host) : null;
}
