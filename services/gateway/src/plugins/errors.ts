import fp from 'fastify-plugin';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, isPermanentFailure, JSONAPI_MEDIA_TYPE, retryAfterSecondsOf } from '@ccs/shared';
import { errorDocument, HttpError, httpStatusOf } from '../http-errors.js';

/** Maps Fastify's own errors (parsing, limits, media types) to our error model. */
function fromFastify(err: FastifyError): AppError | HttpError | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return AppError.badRequest('malformed_json', 'The request body is not valid JSON.', { pointer: '' });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new HttpError(413, 'payload_too_large', 'Payload Too Large', 'The request body is larger than this API accepts.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new HttpError(
        415,
        'unsupported_media_type',
        'Unsupported Media Type',
        'Send the body as application/vnd.api+json (application/json on credit).',
      );
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return AppError.badRequest('invalid_content_length', 'Content-Length does not match the body.');
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return AppError.badRequest('bad_url', 'The request URL is malformed.');
  }
  if (err.statusCode === 429) return AppError.rateLimited('rate_limited', err.message);
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
    return new HttpError(err.statusCode, 'bad_request', 'Bad Request', 'The request could not be understood.');
  }
  return undefined;
}

/** The answer to a path no route serves: 404 `route_not_found`, pointing at the reference. */
export function routeNotFound(request: FastifyRequest, reply: FastifyReply) {
  const e = AppError.notFound('route_not_found', `No route ${request.method} ${request.url.split('?')[0]}. See /docs for the API.`);
  return reply.code(404).type(JSONAPI_MEDIA_TYPE).send(errorDocument(e));
}

/**
 * Every failure becomes a JSON:API error document: an AppError with the status and title of its
 * kind (http-errors.ts), an HttpError of the edge with its own, Fastify's parsing and limit errors
 * mapped, anything else a generic 500 (logged, never shown).
 */
export default fp(
  async function errors(app: FastifyInstance) {
    app.setErrorHandler((err: FastifyError | AppError | HttpError, request, reply) => {
      let e = err instanceof AppError || err instanceof HttpError ? err : fromFastify(err);
      if (!e) {
        request.log.error({ err }, 'unhandled error');
        e = AppError.internal();
      } else if (e instanceof AppError && !isPermanentFailure(e)) {
        request.log.warn({ code: e.code }, 'service error');
      }
      const status = httpStatusOf(e);
      // A service's overload answer says how long to wait (meta.retry_after_seconds).
      const retryAfter = e instanceof AppError && (status === 503 || status === 429) ? retryAfterSecondsOf(e) : undefined;
      if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter));
      if (status === 429 && !reply.hasHeader('retry-after')) reply.header('retry-after', '60');
      // Any other 503 (a service without a replica, its database away: a restart, a Postgres
      // failover) is worth retrying soon, with the same Idempotency-Key for a write.
      if (status === 503 && !reply.hasHeader('retry-after')) reply.header('retry-after', '1');
      return reply.code(status).type(JSONAPI_MEDIA_TYPE).send(errorDocument(e));
    });
    app.setNotFoundHandler(routeNotFound);
  },
  { name: 'errors' },
);
