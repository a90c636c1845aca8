import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer as createTcpServer } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAllowTargets, type Resolver } from '../src/webhooks/destination.js';
import { postWebhook } from '../src/webhooks/post.js';

/**
 * One webhook request against real local sockets: what it stores of each outcome (a status and
 * an error class only), that it never follows a redirect, never decompresses and stops reading
 * after 1 KiB, and that one deadline covers a stalled answer.
 */
describe('postWebhook', () => {
  const servers: { close(cb?: () => void): unknown }[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise<void>((r) => s.close(() => r()))));
  });

  async function serve(handler: Parameters<typeof createServer>[1]): Promise<{ url: string; target: string; server: Server }> {
    const server = createServer(handler);
    servers.push({ close: (cb?: () => void) => (server.closeAllConnections(), server.close(cb)) });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const target = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    return { url: `http://${target}/hook`, target, server };
  }

  const noDns: Resolver = async () => {
    throw Object.assign(new Error('no DNS in this test'), { code: 'ENOTFOUND' });
  };
  const post = (url: string, allow: string[], timeoutMs = 2000) =>
    postWebhook(url, { 'content-type': 'application/json' }, '{"id":"x"}', { timeoutMs, allow: parseAllowTargets(allow.join(',')), resolve: noDns });

  it('sends the body with identity encoding and answers a 2xx as delivered', async () => {
    let seen: { encoding?: string; body: string } | undefined;
    const s = await serve((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen = { encoding: req.headers['accept-encoding'], body };
        res.writeHead(204).end();
      });
    });
    expect(await post(s.url, [s.target])).toEqual({ ok: true, status: 204 });
    expect(seen).toEqual({ encoding: 'identity', body: '{"id":"x"}' });
  });

  it('does not follow a redirect: a 3xx is http_3xx', async () => {
    let followed = 0;
    const s = await serve((req, res) => {
      if (req.url === '/elsewhere') followed++;
      res.writeHead(302, { location: '/elsewhere' }).end();
    });
    expect(await post(s.url, [s.target])).toEqual({ ok: false, status: 302, error: 'http_302' });
    expect(followed).toBe(0);
  });

  it('reads at most 1 KiB of an answer, compressed or not, and keeps only its status', async () => {
    const member = gzipSync(Buffer.alloc(16 * 1024 * 1024));
    let closedEarly = false;
    const s = await serve((req, res) => {
      req.resume();
      res.writeHead(500, { 'content-encoding': 'gzip' });
      let open = true;
      res.on('close', () => {
        closedEarly = open;
        open = false;
      });
      const pump = () => {
        while (open && res.write(member));
        if (open) res.once('drain', pump);
      };
      pump();
    });
    const outcome = await post(s.url, [s.target], 20_000);
    expect(outcome).toEqual({ ok: false, status: 500, error: 'http_500' });
    await new Promise((r) => setTimeout(r, 50));
    expect(closedEarly).toBe(true);
  });

  it('gives up at the deadline: timeout without an answer, the status when the body stalls', async () => {
    const silent = await serve(() => undefined);
    expect(await post(silent.url, [silent.target], 300)).toEqual({ ok: false, status: null, error: 'timeout' });
    const stalled = await serve((req, res) => {
      req.resume();
      res.writeHead(503);
      res.write('x');
    });
    expect(await post(stalled.url, [stalled.target], 300)).toEqual({ ok: false, status: 503, error: 'http_503' });
  });

  it('classes a closed port as refused and a TLS failure as tls', async () => {
    const s = await serve((_req, res) => res.end('plain http'));
    const port = Number(s.target.split(':')[1]);
    // https:// to a plain-HTTP port: the handshake fails.
    expect(await post(`https://127.0.0.1:${port}/hook`, [s.target])).toMatchObject({ ok: false, status: null, error: 'tls' });
    const tcp = createTcpServer();
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
    const closedPort = (tcp.address() as AddressInfo).port;
    await new Promise<void>((r) => tcp.close(() => r()));
    expect(await post(`http://127.0.0.1:${closedPort}/hook`, [`127.0.0.1:${closedPort}`])).toMatchObject({
      ok: false,
      status: null,
      error: 'refused',
    });
  });

  it('refuses a forbidden destination before connecting: a literal, and a name through the lookup', async () => {
    let connections = 0;
    const s = await serve((_req, res) => res.end());
    s.server.on('connection', () => connections++);
    const port = s.target.split(':')[1];
    expect(await post(s.url, [])).toMatchObject({ ok: false, status: null, error: 'destination_forbidden' });
    const toLoopback: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    const byName = await postWebhook(`http://hooks.example.test:${port}/hook`, {}, '{}', { timeoutMs: 2000, allow: new Set(), resolve: toLoopback });
    expect(byName).toMatchObject({ ok: false, status: null, error: 'destination_forbidden' });
    expect(connections).toBe(0);
  });
});
