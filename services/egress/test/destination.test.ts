import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import {
  checkWebhookUrl,
  DestinationForbiddenError,
  guardedLookup,
  parseAllowTargets,
  refusedAddress,
  targetOf,
  type Resolver,
} from '../src/webhooks/destination.js';

/** A resolver that answers from a table (no DNS): the seam the guard takes. */
const table =
  (answers: Record<string, string[]>): Resolver =>
  async (host) => {
    const a = answers[host];
    if (!a) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return a.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

const none = new Set<string>();

describe('webhook destinations: which addresses are refused', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.0.0.2', 'loopback'],
    ['::1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['169.254.169.254', 'linkLocal'],
    ['169.254.0.1', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.127.255.254', 'carrierGradeNat'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['::ffff:127.0.0.1', 'ipv4Mapped'],
    ['::ffff:10.0.0.1', 'ipv4Mapped'],
    ['::ffff:8.8.8.8', 'ipv4Mapped'],
    ['64:ff9b::7f00:1', 'rfc6052'],
    ['2002:7f00:1::', '6to4'],
  ])('%s is refused (%s)', (address, range) => {
    expect(refusedAddress(address)).toEqual({ address: expect.any(String), range });
  });

  it.each(['2130706433', '0x7f000001', '0177.0.0.1', '127.1', '0x7f.0.0.1', '017700000001'])(
    'the non-canonical IPv4 spelling %s is refused',
    (spelling) => {
      expect(refusedAddress(spelling)).toEqual({ spelling });
    },
  );

  it.each(['8.8.8.8', '93.184.215.14', '2001:4860:4860::8888', '100.128.0.1', '172.32.0.1'])('the public address %s is allowed', (address) => {
    expect(refusedAddress(address)).toBeNull();
  });
});

describe('webhook destinations: a URL at registration', () => {
  // Every spelling the issue found accepted and called.
  it.each([
    'http://127.0.0.1:4998/x',
    'http://localhost:4998/x',
    'http://[::1]:4998/x',
    'http://127.0.0.2:4998/x',
    'http://0.0.0.0:4998/x',
    'http://2130706433:4998/x',
    'http://0x7f000001:4998/x',
    'http://0177.0.0.1:4998/x',
    'http://[::ffff:127.0.0.1]:4998/x',
    'http://[::ffff:7f00:1]/x',
    'https://169.254.169.254/latest/meta-data/',
    'http://10.0.0.7/',
    'http://100.64.0.1/',
    'http://[fe80::1]/',
    'http://user-facing.example.com.:8080/',
  ])('%s is refused', async (url) => {
    const resolve = table({ localhost: ['127.0.0.1', '::1'], 'user-facing.example.com.': ['10.0.0.7'] });
    const verdict = await checkWebhookUrl(url, { allow: none, resolve });
    expect(verdict.ok).toBe(false);
  });

  it('refuses a non-canonical spelling even of a public address (http://134744072/ is 8.8.8.8)', async () => {
    expect(await checkWebhookUrl('http://134744072/', { allow: none, resolve: table({}) })).toEqual({
      ok: false,
      refusal: { spelling: '134744072' },
    });
    expect(await checkWebhookUrl('http://8.8.8.8/', { allow: none, resolve: table({}) })).toEqual({ ok: true });
  });

  it('refuses a name when any one of its addresses is refused, and allows a name of public addresses only', async () => {
    const resolve = table({ 'mixed.example': ['93.184.215.14', '192.168.0.10'], 'public.example': ['93.184.215.14', '2001:4860:4860::8888'] });
    expect(await checkWebhookUrl('https://mixed.example/hook', { allow: none, resolve })).toMatchObject({ ok: false, refusal: { range: 'private' } });
    expect(await checkWebhookUrl('https://public.example/hook', { allow: none, resolve })).toEqual({ ok: true });
  });

  it('allows a name that does not resolve (yet): every delivery checks it again', async () => {
    expect(await checkWebhookUrl('https://not-there.example/hook', { allow: none, resolve: table({}) })).toEqual({ ok: true });
    const slow: Resolver = () => new Promise(() => undefined);
    expect(await checkWebhookUrl('https://slow.example/hook', { allow: none, resolve: slow, resolveTimeoutMs: 20 })).toEqual({ ok: true });
  });

  it('exempts exactly the host:port pairs of WEBHOOK_ALLOW_TARGETS', async () => {
    const allow = parseAllowTargets(' 127.0.0.1:4998, localhost:8080 ,,[::1]:9000');
    expect([...allow]).toEqual(['127.0.0.1:4998', 'localhost:8080', '[::1]:9000']);
    const resolve = table({ localhost: ['127.0.0.1'] });
    expect(await checkWebhookUrl('http://127.0.0.1:4998/x', { allow, resolve })).toEqual({ ok: true });
    expect(await checkWebhookUrl('http://LOCALHOST:8080/x', { allow, resolve })).toEqual({ ok: true });
    expect(await checkWebhookUrl('http://[::1]:9000/x', { allow, resolve })).toEqual({ ok: true });
    // Another port, another host, the scheme's default port: not exempt.
    expect((await checkWebhookUrl('http://127.0.0.1:4999/x', { allow, resolve })).ok).toBe(false);
    expect((await checkWebhookUrl('http://localhost/x', { allow, resolve })).ok).toBe(false);
    expect((await checkWebhookUrl('http://127.0.0.2:4998/x', { allow, resolve })).ok).toBe(false);
    expect(targetOf(new URL('https://Example.COM/x'))).toBe('example.com:443');
  });
});

describe('webhook destinations: the lookup a delivery connects through', () => {
  const lookup = (resolve: Resolver, host: string, all: boolean) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number }>((done) =>
      guardedLookup(resolve)(host, { all }, (err, address, family) => done({ err, address, family })),
    );

  it('hands the socket only the addresses it checked', async () => {
    const resolve = table({ 'public.example': ['93.184.215.14', '2001:4860:4860::8888'] });
    expect(await lookup(resolve, 'public.example', false)).toEqual({ err: null, address: '93.184.215.14', family: 4 });
    expect((await lookup(resolve, 'public.example', true)).address).toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2001:4860:4860::8888', family: 6 },
    ]);
  });

  it('fails with destination forbidden when any address is refused, so no connection is made', async () => {
    const resolve = table({ 'rebinding.example': ['93.184.215.14', '127.0.0.1'], localhost: ['127.0.0.1'] });
    for (const host of ['rebinding.example', 'localhost']) {
      const r = await lookup(resolve, host, true);
      expect(r.err).toBeInstanceOf(DestinationForbiddenError);
      expect(r.address).toEqual([]);
    }
  });

  it('passes on a resolution failure as it is (the attempt fails as refused)', async () => {
    const r = await lookup(table({}), 'nowhere.example', false);
    expect(r.err?.code).toBe('ENOTFOUND');
  });
});
