import { pino, type Logger } from 'pino';

export type { Logger };

/** JSON logs; secrets never appear because these paths are redacted wherever they occur. */
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
];

/** Creates the process logger for one service. */
export function createLogger(service: string, level: string): Logger {
  return pino({ name: service, level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } });
}
