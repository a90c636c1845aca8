import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { JSONAPI_MEDIA_TYPE } from '@ccs/shared';
import { HttpError } from '../http-errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The body media type a route takes: JSON:API documents, or plain JSON (credit). */
    bodyType?: 'jsonapi' | 'json';
  }
}

const notAcceptable = () => new HttpError(406, 'not_acceptable', 'Not Acceptable', `Accept ${JSONAPI_MEDIA_TYPE} without media type parameters.`);

const unsupported = (detail: string) => new HttpError(415, 'unsupported_media_type', 'Unsupported Media Type', detail);

/** Media types in an Accept or Content-Type header, each with whether it carries parameters. */
function mediaTypes(header: string): { type: string; hasParams: boolean }[] {
  return header.split(',').map((part) => {
    const [type = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    // The q weight is a parameter of the Accept header, not of the media type.
    return { type, hasParams: params.some((p) => p && !p.startsWith('q=')) };
  });
}

/**
 * JSON:API content negotiation: a request body must use the route's media type (JSON:API
 * documents with no media type parameters, else 415); an Accept header that names the JSON:API
 * media type only with parameters gets 406.
 */
export default fp(
  async function negotiation(app: FastifyInstance) {
    app.addContentTypeParser(JSONAPI_MEDIA_TYPE, { parseAs: 'string' }, app.getDefaultJsonParser('error', 'error'));

    // Callback style, and no parsing for the usual headers: an Accept that is exactly the JSON:API
    // media type, or that does not mention it at all (any case), can never be refused.
    app.addHook('onRequest', (request, _reply, done) => {
      const accept = request.headers.accept;
      if (!accept || accept === JSONAPI_MEDIA_TYPE || !accept.toLowerCase().includes(JSONAPI_MEDIA_TYPE)) return done();
      const jsonapi = mediaTypes(accept).filter((m) => m.type === JSONAPI_MEDIA_TYPE);
      if (jsonapi.length > 0 && jsonapi.every((m) => m.hasParams)) return done(notAcceptable());
      done();
    });

    app.addHook('preValidation', async (request) => {
      const expected = request.routeOptions.config.bodyType;
      if (!expected) return;
      const header = request.headers['content-type'];
      if (!header) throw unsupported(`Send the body with Content-Type: ${expected === 'jsonapi' ? JSONAPI_MEDIA_TYPE : 'application/json'}.`);
      const [ct] = mediaTypes(header);
      if (expected === 'jsonapi' && (ct?.type !== JSONAPI_MEDIA_TYPE || ct.hasParams)) {
        throw unsupported(`Send the body as ${JSONAPI_MEDIA_TYPE}, with no media type parameters.`);
      }
      if (expected === 'json' && ct?.type !== 'application/json') {
        throw unsupported('Send the body as application/json.');
      }
    });
  },
  { name: 'negotiation', dependencies: ['errors'] },
);
