import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import formbody from '@fastify/formbody';
import secureSession from '@fastify/secure-session';
import { WEBHOOK_EVENT_TYPES } from '@ccs/shared';
import { adminApi, errorLines, type ApiAnswer } from './admin-client.js';
import { CONSOLE_CSS, CONSOLE_JS } from './assets.js';
import { html, type SafeHtml } from './html.js';
import { notice, page } from './layout.js';
import * as pages from './pages.js';
import { SignInThrottle } from './sign-in-throttle.js';

/**
 * The studio console (docs/console.md): server-rendered pages at /console over the admin API,
 * with htmx for the parts that update in place and Chart.js for the charts, all served from the
 * gateway's own packages. Sign-in takes the app's secret key, kept only in an encrypted, HttpOnly,
 * SameSite=Strict session cookie (never in a URL or in script-readable storage); each page calls
 * the admin API in-process with it, so the numbers are the API's and every call is audited.
 */

declare module '@fastify/secure-session' {
  interface SessionData {
    key: string;
    app: { id: string; name: string };
  }
}

const require = createRequire(import.meta.url);

/** A file of an installed package: its directory is found from its entry point (exports may hide the file itself). */
function vendor(pkg: string, file: string): Buffer {
  let dir = dirname(require.resolve(pkg));
  while (!existsSync(join(dir, 'package.json')) || JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name !== pkg) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`cannot find the package directory of ${pkg}`);
    dir = up;
  }
  return readFileSync(join(dir, file));
}

/** Every asset the pages load, by name: vendor files from node_modules and our own script and styles. */
function loadAssets(): Map<string, { type: string; body: Buffer }> {
  return new Map([
    ['pico.min.css', { type: 'text/css; charset=utf-8', body: vendor('@picocss/pico', 'css/pico.min.css') }],
    ['htmx.min.js', { type: 'text/javascript; charset=utf-8', body: vendor('htmx.org', 'dist/htmx.min.js') }],
    ['chart.umd.min.js', { type: 'text/javascript; charset=utf-8', body: vendor('chart.js', 'dist/chart.umd.min.js') }],
    ['console.js', { type: 'text/javascript; charset=utf-8', body: Buffer.from(CONSOLE_JS) }],
    ['console.css', { type: 'text/css; charset=utf-8', body: Buffer.from(CONSOLE_CSS) }],
  ]);
}

/** Scripts and styles only from the gateway itself; no inline script, no framing, forms post back here only. */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface ConsoleOptions {
  /** Where failed sign-ins are counted per address (shared by every gateway replica). */
  redis: Redis;
  redisPrefix: string;
  /** Failed sign-ins per address and minute before 429 (CONSOLE_SIGNIN_FAILURES_PER_MINUTE). */
  signInFailuresPerMinute: number;
  /** 32 bytes: the key that encrypts the session cookie (CONSOLE_SESSION_KEY). */
  sessionKey: Buffer;
  /** How long a sign-in lasts, in seconds. */
  sessionSeconds: number;
}

export async function consoleRoutes(app: FastifyInstance, opts: ConsoleOptions) {
  const assets = loadAssets();
  const throttle = new SignInThrottle(opts.redis, opts.redisPrefix, opts.signInFailuresPerMinute);
  await app.register(formbody, { bodyLimit: 1024 * 1024 });
  await app.register(secureSession, {
    cookieName: 'ccs_console',
    key: opts.sessionKey,
    expiry: opts.sessionSeconds,
    cookie: { path: '/console', httpOnly: true, sameSite: 'strict', secure: 'auto', maxAge: opts.sessionSeconds },
  });

  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('content-security-policy', CSP);
    reply.header('x-frame-options', 'DENY');
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'same-origin');
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    return payload;
  });

  // Forms post back to the console only: a cross-site POST (its Origin another site's) is refused,
  // on top of the SameSite=Strict cookie that such a request would not carry anyway.
  app.addHook('preHandler', async (request, reply) => {
    if (request.method !== 'POST') return;
    const origin = request.headers.origin;
    const self = `${request.protocol}://${request.host}`;
    const sameSite = origin
      ? origin === self
      : request.headers['sec-fetch-site'] === undefined || request.headers['sec-fetch-site'] === 'same-origin';
    if (!sameSite)
      return reply
        .code(403)
        .type('text/html; charset=utf-8')
        .send(page({ title: 'Refused', body: notice('error', 'A form of another site cannot act here.') }).value);
  });

  app.setErrorHandler((err, request, reply) => {
    request.log.error({ err }, 'console page failed');
    const status = (err as { statusCode?: number }).statusCode ?? 500;
    const message =
      status < 500 ? (err as Error).message : 'Something went wrong on our side; try again. The gateway log has the details (request id below).';
    return reply
      .code(status)
      .type('text/html; charset=utf-8')
      .send(
        page({
          title: 'Error',
          body: html`${notice('error', message)}
            <p class="muted">Request ${request.id}</p>`,
        }).value,
      );
  });

  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .type('text/html; charset=utf-8')
      .send(page({ title: 'Not found', app: appOf(request), body: notice('error', 'No such console page.') }).value),
  );

  const send = (reply: FastifyReply, body: SafeHtml, status = 200) => reply.code(status).type('text/html; charset=utf-8').send(body.value);
  const appOf = (request: FastifyRequest) => request.session.get('app');
  /** A page of the signed-in console. */
  const view = (request: FastifyRequest, reply: FastifyReply, title: string, current: string, body: SafeHtml, status = 200) =>
    send(reply, page({ title, current, app: appOf(request), body }), status);

  /** The session's secret key, or a redirect to the sign-in page (undefined then). */
  function keyOr(request: FastifyRequest, reply: FastifyReply): string | undefined {
    const key = request.session.get('key');
    if (!key) void reply.redirect('/console/sign-in', 303);
    return key;
  }
  /** An admin API answer that failed: the signed-out case (key rotated away) goes back to sign-in, others show their errors. */
  function failed(request: FastifyRequest, reply: FastifyReply, title: string, current: string, a: ApiAnswer) {
    if (a.status === 401 || a.status === 403) {
      request.session.delete();
      return reply.redirect('/console/sign-in?expired=1', 303);
    }
    return view(request, reply, title, current, pages.errorBody(errorLines(a)), a.status >= 500 ? 502 : a.status);
  }

  app.get('/assets/:name', async (request, reply) => {
    const asset = assets.get((request.params as { name: string }).name);
    if (!asset) return reply.code(404).type('text/plain').send('no such asset');
    return reply.type(asset.type).header('cache-control', 'public, max-age=3600').send(asset.body);
  });

  app.get('/sign-in', async (request, reply) => {
    if (request.session.get('key')) return reply.redirect('/console', 303);
    const expired = (request.query as Record<string, string>).expired;
    return send(
      reply,
      page({ title: 'Sign in', body: pages.signInBody(expired ? 'The session ended or the key no longer works: sign in again.' : undefined) }),
    );
  });

  app.post('/sign-in', async (request, reply) => {
    // Too many failures from this address this minute: every attempt waits, a right key too.
    const wait = await throttle.wait(request.ip);
    if (wait !== undefined) {
      reply.header('retry-after', String(wait));
      const why = `Too many failed sign-ins from your address: try again in ${wait} second${wait === 1 ? '' : 's'}.`;
      return send(reply, page({ title: 'Sign in', body: pages.signInBody(why) }), 429);
    }
    const key = String((request.body as Record<string, unknown> | undefined)?.secret_key ?? '').trim();
    const a = key ? await adminApi(request, key, 'GET', '/api/v1/admin/overview') : { status: 401, body: undefined };
    if (a.status !== 200) {
      // A refused key counts against the address; the admin API failing (5xx) is not the caller's doing.
      if (a.status < 500) await throttle.failed(request.ip);
      const why =
        a.status === 403
          ? "That is a publishable key: the console needs the app's secret key (sk_…)."
          : a.status === 401 || a.status === 400
            ? 'No app has that secret key.'
            : `The admin API answered ${a.status}; try again.`;
      return send(reply, page({ title: 'Sign in', body: pages.signInBody(why) }), a.status === 403 ? 403 : 401);
    }
    request.session.set('key', key);
    request.session.set('app', { id: a.body.data.id, name: a.body.data.attributes.name });
    return reply.redirect('/console', 303);
  });

  app.post('/sign-out', async (request, reply) => {
    request.session.delete();
    return reply.redirect('/console/sign-in', 303);
  });

  app.get('/', async (request, reply) => {
    const key = keyOr(request, reply);
    if (!key) return reply;
    const a = await adminApi(request, key, 'GET', '/api/v1/admin/overview');
    if (a.status !== 200) return failed(request, reply, 'Overview', '/console', a);
    return view(request, reply, 'Overview', '/console', pages.overviewBody(a.body.data));
  });

  app.get('/players', async (request, reply) => {
    const key = keyOr(request, reply);
    if (!key) return reply;
    const q = String((request.query as Record<string, unknown>).q ?? '').trim();
    if (!q) return view(request, reply, 'Players', '/console/players', pages.playerSearchBody(''));
    return reply.redirect(`/console/players/${encodeURIComponent(q)}`, 303);
  });

  app.get('/players/:id', async (request, reply) => {
    const key = keyOr(request, reply);
    if (!key) return reply;
    const id = (request.params as { id: string }).id;
    const a = await adminApi(request, key, 'GET', `/api/v1/admin/players/${encodeURIComponent(id)}`);
    if (a.status === 404)
      return view(request, reply, 'Players', '/console/players', pages.playerSearchBody(id, `No player "${id}" in this app.`), 404);
    if (a.status !== 200) return failed(request, reply, 'Player', '/console/players', a);
    return view(request, reply, `Player ${a.body.data.attributes.email ?? a.body.data.id}`, '/console/players', pages.playerBody(a.body.data));
  });

  app.get('/chests', async (request, reply) => {
    const key = keyOr(request, reply);
    if (!key) return reply;
    const a = await adminApi(request, key, 'GET', '/api/v1/chests?page[limit]=100');
    if (a.status !== 200) return failed(request, reply, 'Chests', '/console/chests', a);
    return view(request, reply, 'Chests', '/console/chests', pages.chestsBody(a.body.data));
  });

  app.get('/chests/:id', async (request, reply) => {
    const key = keyOr(request, reply);
    if (!key) return reply;
    const id = (request.params as { id: string }).id;
    if (!UUID.test(id)) return view(request, reply, 'Chests', '/console/chests', notice('error', 'No such chest.'), 404);
    const [a, drops] = await Promise.all([
      adminApi(request, key, 'GET', `/api/v1/chests/${id}`),
      adminApi(request, key, 'GET', `/api/v1/admin/chests/${id}/drops`),
    ]);
    if (a.status !== 200) return failed(request, reply, 'Chest', '/console/chests', a);
    if (drops.status !== 200) return failed(request, reply, 'Chest', '/console/chests', drops);
    return view(request, reply, a.body.data.attributes.name, '/console/chests', pages.chestBody(id, drops.body.data));
  });

  /** htmx: a simulation run, as a fragment. */
  app.post('/chests/:id/simulation', async (request, reply) => {
    const key = keyOr(request, reply);
    if (!key) return reply;
    const id = (request.params as { id: string }).id;
    const form = (request.body ?? {}) as Record<string, string>;
    const attributes: Record<string, unknown> = { opens: form.opens ? Number(form.opens) : 10_000 };
    if (form.seed) attributes.seed = form.seed;
    const a = await adminApi(request, key, 'POST', `/api/v1/admin/chests/${encodeURIComponent(id)}/simulation`, {
      json: { data: { type: 'simulation', attributes } },
    });
    if (a.status !== 200) return send(reply, pages.errorBody(errorLines(a)), 200);
    return send(reply, pages.simulationBody(a.body.data));
  });

  app.get('/content', async (request, reply) => {
    const key = keyOr(request, reply);
    if (!key) return reply;
    const a = await adminApi(request, key, 'GET', '/api/v1/admin/content');
    if (a.status !== 200) return failed(request, reply, 'Content', '/console/content', a);
    return view(request, reply, 'Content', '/console/content', pages.contentBody(a.body));
  });

  app.post('/content', async (request, reply) => {
    const key = keyOr(request, reply);
    if (!key) return reply;
    const text = String((request.body as Record<string, unknown> | undefined)?.content ?? '');
    let result: SafeHtml;
    let status = 200;
    let draft = '';
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      parsed = undefined;
      result = pages.errorBody([`The file is not valid JSON: ${(err as Error).message}`]);
      status = 422;
      draft = text;
    }
    if (parsed !== undefined) {
      const loaded = await adminApi(request, key, 'POST', '/api/v1/admin/content', { json: parsed, type: 'json' });
      if (loaded.status === 201)
        result = notice('success', `Loaded as version ${loaded.body.data.attributes.version}; each service applies it within moments.`);
      else {
        result = pages.errorBody(errorLines(loaded));
        status = loaded.status === 413 ? 413 : 422;
        draft = text;
      }
    }
    const a = await adminApi(request, key, 'GET', '/api/v1/admin/content');
    if (a.status !== 200) return failed(request, reply, 'Content', '/console/content', a);
    return view(request, reply, 'Content', '/console/content', pages.contentBody(a.body, result!, draft), status);
  });

  app.get('/content/:version/diff', async (request, reply) => {
    const key = keyOr(request, reply);
    if (!key) return reply;
    const v = (request.params as { version: string }).version;
    const a = await adminApi(request, key, 'GET', `/api/v1/admin/content/${encodeURIComponent(v)}/diff`);
    if (a.status !== 200) return failed(request, reply, 'Content diff', '/console/content', a);
    return view(request, reply, `Content: v${v} → current`, '/console/content', pages.diffBody(a.body.data));
  });

  app.get('/audit', async (request, reply) => {
    const key = keyOr(request, reply);
    if (!key) return reply;
    const offset = Math.max(0, Math.floor(Number((request.query as Record<string, string>).offset ?? 0)) || 0);
    const limit = 50;
    const a = await adminApi(request, key, 'GET', `/api/v1/admin/audit?page[limit]=${limit}&page[offset]=${offset}`);
    if (a.status !== 200) return failed(request, reply, 'Audit log', '/console/audit', a);
    return view(request, reply, 'Audit log', '/console/audit', pages.auditBody(a.body, offset, limit));
  });

  app.get('/webhooks', async (request, reply) => {
    const key = keyOr(request, reply);
    if (!key) return reply;
    const a = await adminApi(request, key, 'GET', '/api/v1/admin/webhooks');
    if (a.status !== 200) return failed(request, reply, 'Webhooks', '/console/webhooks', a);
    return view(request, reply, 'Webhooks', '/console/webhooks', pages.webhooksBody(a.body));
  });

  app.post('/webhooks', async (request, reply) => {
    const key = keyOr(request, reply);
    if (!key) return reply;
    const form = (request.body ?? {}) as Record<string, string | string[]>;
    const events = [form.events ?? []].flat().filter((e) => (WEBHOOK_EVENT_TYPES as readonly string[]).includes(e));
    const attributes = { url: String(form.url ?? ''), description: String(form.description ?? ''), events };
    const made = await adminApi(request, key, 'POST', '/api/v1/admin/webhooks', { json: { data: { type: 'webhook_endpoint', attributes } } });
    const a = await adminApi(request, key, 'GET', '/api/v1/admin/webhooks');
    if (a.status !== 200) return failed(request, reply, 'Webhooks', '/console/webhooks', a);
    if (made.status !== 201)
      return view(request, reply, 'Webhooks', '/console/webhooks', pages.webhooksBody(a.body, undefined, errorLines(made).join(' ')), 422);
    return view(
      request,
      reply,
      'Webhooks',
      '/console/webhooks',
      pages.webhooksBody(a.body, { url: attributes.url, secret: made.body.data.attributes.secret }),
    );
  });

  /** One endpoint, from the list (the admin API lists them whole). */
  async function endpointOf(request: FastifyRequest, key: string, id: string) {
    const a = await adminApi(request, key, 'GET', '/api/v1/admin/webhooks');
    return {
      answer: a,
      endpoint: a.status === 200 ? (a.body.data as { id: string; attributes: { enabled: boolean } }[]).find((e) => e.id === id) : undefined,
    };
  }

  async function webhookPage(request: FastifyRequest, reply: FastifyReply, key: string, id: string, secret?: string) {
    const status = (request.query as Record<string, string>).status;
    const filter = status && ['pending', 'delivered', 'parked'].includes(status) ? status : undefined;
    const { answer, endpoint } = await endpointOf(request, key, id);
    if (answer.status !== 200) return failed(request, reply, 'Webhook', '/console/webhooks', answer);
    if (!endpoint) return view(request, reply, 'Webhook', '/console/webhooks', notice('error', 'No such webhook endpoint in this app.'), 404);
    const d = await adminApi(
      request,
      key,
      'GET',
      `/api/v1/admin/webhooks/${id}/deliveries?page[limit]=50${filter ? `&filter[status]=${filter}` : ''}`,
    );
    if (d.status !== 200) return failed(request, reply, 'Webhook', '/console/webhooks', d);
    return view(request, reply, 'Webhook deliveries', '/console/webhooks', pages.webhookBody(endpoint, d.body, filter, secret));
  }

  app.get('/webhooks/:id', async (request, reply) => {
    const key = keyOr(request, reply);
    if (!key) return reply;
    const id = (request.params as { id: string }).id;
    if (!UUID.test(id)) return view(request, reply, 'Webhook', '/console/webhooks', notice('error', 'No such webhook endpoint in this app.'), 404);
    return webhookPage(request, reply, key, id);
  });

  app.post('/webhooks/:id/:action', async (request, reply) => {
    const key = keyOr(request, reply);
    if (!key) return reply;
    const { id, action } = request.params as { id: string; action: string };
    if (!UUID.test(id) || !['toggle', 'rotate', 'delete'].includes(action)) return reply.callNotFound();
    if (action === 'delete') {
      const r = await adminApi(request, key, 'DELETE', `/api/v1/admin/webhooks/${id}`);
      if (r.status !== 204) return failed(request, reply, 'Webhook', '/console/webhooks', r);
      return reply.redirect('/console/webhooks', 303);
    }
    const { endpoint } = await endpointOf(request, key, id);
    if (!endpoint) return view(request, reply, 'Webhook', '/console/webhooks', notice('error', 'No such webhook endpoint in this app.'), 404);
    const attributes = action === 'rotate' ? { rotate_secret: true } : { enabled: !endpoint.attributes.enabled };
    const r = await adminApi(request, key, 'PATCH', `/api/v1/admin/webhooks/${id}`, { json: { data: { type: 'webhook_endpoint', attributes } } });
    if (r.status !== 200) return failed(request, reply, 'Webhook', '/console/webhooks', r);
    if (action === 'rotate') return webhookPage(request, reply, key, id, r.body.data.attributes.secret);
    return reply.redirect(`/console/webhooks/${id}`, 303);
  });

  /** htmx: retries a delivery and answers its updated row. */
  app.post('/webhooks/:id/deliveries/:delivery/retry', async (request, reply) => {
    const key = keyOr(request, reply);
    if (!key) return reply;
    const { id, delivery } = request.params as { id: string; delivery: string };
    const r = await adminApi(
      request,
      key,
      'POST',
      `/api/v1/admin/webhooks/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(delivery)}/retry`,
    );
    if (r.status !== 202)
      return send(
        reply,
        html`<tr>
          <td colspan="7">${pages.errorBody(errorLines(r))}</td>
        </tr>`,
      );
    return send(reply, pages.deliveryRowHtml(id, r.body.data));
  });
}
