import { pino, type DestinationStream, type Logger } from 'pino';
import { logCorrelation } from '../observability/log-correlation.js';

export type { Logger };

/** JSON logs; secrets and personal data never appear because these paths are redacted wherever they occur. */
export const REDACT_PATHS = [
  'password',
  'password_confirmation',
  'refresh_token',
  'access_token',
  'token',
  'apikey',
  'authorization',
  '*.password',
  '*.password_confirmation',
  '*.refresh_token',
  '*.access_token',
  '*.apikey',
  '*.authorization',
  'req.headers.authorization',
  'req.headers.apikey',
  // Spellings used inside the services and NATS payloads (ResolveApiKey's apiKey, token pairs,
  // key material), and the header bags of requests and messages.
  'apiKey',
  'refreshToken',
  'accessToken',
  'privateKey',
  'secret',
  '*.apiKey',
  '*.refreshToken',
  '*.accessToken',
  '*.privateKey',
  '*.secret',
  'headers.authorization',
  'headers.apikey',
  'headers.cookie',
  '*.headers.authorization',
  '*.headers.apikey',
  '*.headers.cookie',
  // Personal data players declare for the compliance gates (country, birth year): in bodies,
  // NATS payloads and replies, in either spelling. Never needed in a log to run the service.
  'country',
  'birth_year',
  'birthYear',
  '*.country',
  '*.birth_year',
  '*.birthYear',
];

/**
 * Creates the process logger for one service: JSON lines on stdout (or `destination`, for tests),
 * secrets redacted, and on every line logged while a request or message is handled its
 * `requestId`, `traceId` and `spanId` (see observability/log-correlation).
 */
export function createLogger(service: string, level: string, destination?: DestinationStream): Logger {
  const options = { name: service, level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, mixin: logCorrelation };
  return destination ? pino(options, destination) : pino(options);
}
