import type { FastifyInstance } from 'fastify';
import { html } from './html.js';
import { notice, page } from './layout.js';
import { sendHtml } from './signed-in.js';

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

/** The console's headers on every answer: the CSP, no framing or sniffing, no caching unless an asset says so. */
export function addSecurityHeaders(app: FastifyInstance) {
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('content-security-policy', CSP);
    reply.header('x-frame-options', 'DENY');
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'same-origin');
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    return payload;
  });
}

/**
 * Forms post back to the console only: a cross-site POST (its Origin another site's) is refused,
 * on top of the SameSite=Strict cookie that such a request would not carry anyway.
 */
export function refuseCrossSitePosts(app: FastifyInstance) {
  app.addHook('preHandler', async (request, reply) => {
    if (request.method !== 'POST') return;
    const origin = request.headers.origin;
    const self = `${request.protocol}://${request.host}`;
    const sameSite = origin
      ? origin === self
      : request.headers['sec-fetch-site'] === undefined || request.headers['sec-fetch-site'] === 'same-origin';
    if (!sameSite) return sendHtml(reply, page({ title: 'Refused', body: notice('error', 'A form of another site cannot act here.') }), 403);
  });
}

/** A status of an error, if it carries one (Fastify's errors and http-errors do). */
const statusOf = (err: unknown): number => {
  const status = typeof err === 'object' && err !== null && 'statusCode' in err ? err.statusCode : undefined;
  return typeof status === 'number' ? status : 500;
};

/** Errors and unknown pages as console pages: a 5xx never shows its message, only the request id. */
export function handleErrors(app: FastifyInstance) {
  app.setErrorHandler((err, request, reply) => {
    request.log.error({ err }, 'console page failed');
    const status = statusOf(err);
    const message =
      status < 500 && err instanceof Error
        ? err.message
        : 'Something went wrong on our side; try again. The gateway log has the details (request id below).';
    const body = html`${notice('error', message)}
      <p class="muted">Request ${request.id}</p>`;
    return sendHtml(reply, page({ title: 'Error', body }), status);
  });
  app.setNotFoundHandler((request, reply) =>
    sendHtml(reply, page({ title: 'Not found', app: request.session.get('app'), body: notice('error', 'No such console page.') }), 404),
  );
}
