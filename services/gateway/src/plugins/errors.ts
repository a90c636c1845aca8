import fp from 'fastify-plugin';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, errorDocument, JSONAPI_MEDIA_TYPE, retryAfterSecondsOf } from '@ccs/shared';

/** Maps Fastify's own errors (parsing, limits, media types) to our error model. */
function fromFastify(err: FastifyError): AppError | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return AppError.badRequest('malformed_json', 'The request body is not valid JSON.', { pointer: '' });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError({
        status: 413,
        code: 'payload_too_large',
        title: 'Payload Too Large',
        detail: 'The request body is larger than this API accepts.',
      });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError({
        status: 415,
        code: 'unsupported_media_type',
        title: 'Unsupported Media Type',
        detail: 'Send the body as application/vnd.api+json (application/json on credit).',
      });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return AppError.badRequest('invalid_content_length', 'Content-Length does not match the body.');
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return AppError.badRequest('bad_url', 'The request URL is malformed.');
  }
  if (err.statusCode === 429) {
    return new AppError({ status: 429, code: 'rate_limited', title: 'Too Many Requests', detail: err.message });
  }
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
    return new AppError({ status: err.statusCode, code: 'bad_request', title: 'Bad Request', detail: 'The request could not be understood.' });
  }
  return undefined;
}

/**
 * Every failure becomes a JSON:API error document: typed AppErrors unchanged, Fastify's parsing
 * and limit errors mapped, anything else a generic 500 (logged, never shown).
 */
/** The answer to a path no route serves: 404 `route_not_found`, pointing at the reference. */
export function routeNotFound(request: FastifyRequest, reply: FastifyReply) {
  const e = AppError.notFound('route_not_found', `No route ${request.method} ${request.url.split('?')[0]}. See /docs for the API.`);
  return reply.code(404).type(JSONAPI_MEDIA_TYPE).send(errorDocument(e.errors));
}

export default fp(
  async function errors(app: FastifyInstance) {
    app.setErrorHandler((err: FastifyError | AppError, request, reply) => {
      let appErr = err instanceof AppError ? err : fromFastify(err as FastifyError);
      if (!appErr) {
        request.log.error({ err }, 'unhandled error');
        appErr = AppError.internal();
      } else if (appErr.status >= 500) {
        request.log.warn({ code: appErr.code }, 'service error');
      }
      // A service's overload answer says how long to wait (meta.retry_after_seconds).
      const retryAfter = appErr.status === 503 || appErr.status === 429 ? retryAfterSecondsOf(appErr) : undefined;
      if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter));
      if (appErr.status === 429 && !reply.hasHeader('retry-after')) reply.header('retry-after', '60');
      return reply.code(appErr.status).type(JSONAPI_MEDIA_TYPE).send(errorDocument(appErr.errors));
    });
    app.setNotFoundHandler(routeNotFound);
  },
  { name: 'errors' },
);
