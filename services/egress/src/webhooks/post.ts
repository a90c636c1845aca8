import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { DestinationForbiddenError, guardedLookup, portOf, refusedLiteral, targetOf, type Refusal, type Resolver } from './destination.js';

/** The error classes a failed attempt stores (docs/design.md §6), besides `http_<status>`. */
export type ErrorClass = 'timeout' | 'refused' | 'tls' | 'destination_forbidden' | `http_${number}`;

/** How one attempt ended: a 2xx, or a failure with its class (and the status code, when there was an answer). */
export type PostOutcome = { ok: true; status: number } | { ok: false; status: number | null; error: ErrorClass; refusal?: Refusal; detail?: string };

/** Most bytes of an answer read (and thrown away): the rest is never received. */
export const ANSWER_READ_LIMIT = 1024;

export interface PostOptions {
  /** One deadline for connect, headers and the first 1 KiB of the answer. */
  timeoutMs: number;
  /** WEBHOOK_ALLOW_TARGETS (exact host:port pairs exempt from the address rules). */
  allow: Set<string>;
  resolve: Resolver;
}

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|ERR_OSSL_|EPROTO$|HOSTNAME_MISMATCH|ERR_TLS_CERT)/;

function classify(err: NodeJS.ErrnoException): ErrorClass {
  if (err instanceof DestinationForbiddenError) return 'destination_forbidden';
  const code = err.code ?? '';
  if (code === 'ETIMEDOUT') return 'timeout';
  if (TLS_CODES.test(code) || /certificate|ssl|tls/i.test(err.message)) return 'tls';
  return 'refused';
}

/**
 * POSTs one webhook body with node:http(s), not fetch: nothing is decompressed (the request asks
 * for `identity`, and a compressed answer is read as the bytes it is), at most 1 KiB of the answer
 * is read before the socket is destroyed, redirects are not followed (a 3xx is `http_3xx`), and
 * one deadline covers everything. Unless its `host:port` is allow-listed, the destination is
 * checked: an IP literal before anything is sent, a name by the guarded `lookup`, which hands the
 * socket only the addresses it checked. Never throws; never keeps the answer.
 */
export function postWebhook(url: string, headers: Record<string, string>, body: string, opts: PostOptions): Promise<PostOutcome> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return Promise.resolve({ ok: false, status: null, error: 'refused', detail: 'invalid url' });
  }
  const allowed = opts.allow.has(targetOf(u));
  if (!allowed) {
    const refusal = refusedLiteral(u);
    if (refusal) return Promise.resolve({ ok: false, status: null, error: 'destination_forbidden', refusal });
  }
  const payload = Buffer.from(body, 'utf8');
  return send(u, requestOptions(u, headers, payload.length, allowed ? undefined : opts.resolve), payload, opts.timeoutMs);
}

/** The request's options: a fresh connection, no compression, and the lookup guarded by `guardWith` (none: allow-listed). */
function requestOptions(u: URL, headers: Record<string, string>, length: number, guardWith: Resolver | undefined): RequestOptions {
  return {
    method: 'POST',
    host: u.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: portOf(u),
    path: `${u.pathname}${u.search}`,
    // A fresh connection per request: nothing pooled outlives the attempt.
    agent: false,
    headers: { ...headers, 'accept-encoding': 'identity', 'content-length': String(length), connection: 'close' },
    ...(guardWith ? { lookup: guardedLookup(guardWith) as unknown as RequestOptions['lookup'] } : {}),
  };
}

/** Sends the request and settles on the first of: 1 KiB of the answer (or its end), an error, the deadline. Never rejects. */
function send(u: URL, options: RequestOptions, payload: Buffer, timeoutMs: number): Promise<PostOutcome> {
  return new Promise<PostOutcome>((resolve) => {
    let settled = false;
    // Once the status line is in, that is the outcome, even if the body then stalls.
    let answered: PostOutcome | undefined;
    const done = (o: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      req.destroy();
      resolve(o);
    };
    const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)(options, (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      const outcome: PostOutcome = status >= 200 && status < 300 ? { ok: true, status } : { ok: false, status, error: `http_${status}` };
      answered = outcome;
      // Read (and drop) at most 1 KiB of the answer, as it comes: compressed bytes stay compressed.
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= ANSWER_READ_LIMIT) done(outcome);
      });
      res.on('end', () => done(outcome));
      res.on('error', () => done(outcome));
    });
    const deadline = setTimeout(() => done(answered ?? { ok: false, status: null, error: 'timeout' }), timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) =>
      done(
        answered ?? {
          ok: false,
          status: null,
          error: classify(err),
          ...(err instanceof DestinationForbiddenError ? { refusal: err.refusal } : { detail: err.code ?? err.name }),
        },
      ),
    );
    req.end(payload);
  });
}
