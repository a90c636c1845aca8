import type { FastifyInstance } from 'fastify';
import { JSONAPI_MEDIA_TYPE } from '@ccs/shared';
import { HttpError } from '../../../http-errors.js';

/**
 * For routes whose body is optional (guest creation, logout): no body, or an empty one sent with
 * the JSON:API media type, counts as no body, so `curl -X POST -H 'Content-Type:
 * application/vnd.api+json'` works. A body must still be JSON:API without media type parameters
 * (else 415), and malformed JSON stays a 400. Applies to the encapsulated context it runs in.
 */
export function allowEmptyJsonApiBody(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(JSONAPI_MEDIA_TYPE, { parseAs: 'string' }, (request, body, done) => {
    if (/;\s*\S/.test(request.headers['content-type'] ?? '')) {
      return done(
        new HttpError(
          415,
          'unsupported_media_type',
          'Unsupported Media Type',
          `Send the body as ${JSONAPI_MEDIA_TYPE}, with no media type parameters.`,
        ),
        undefined,
      );
    }
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    return parseJson(request, text, done);
  });
}
