import { readFileSync } from 'node:fs';
import { credsAuthenticator, type ConnectionOptions, type TlsOptions } from 'nats';
import { ConfigError, type BaseConfig } from '../config/config.js';

/** The settings `natsAuthOptions` reads (every process's config has them). */
export type NatsAuthConfig = Pick<
  BaseConfig,
  'NATS_USER' | 'NATS_PASSWORD' | 'NATS_TOKEN' | 'NATS_CREDS' | 'NATS_TLS_CA' | 'NATS_TLS_CERT' | 'NATS_TLS_KEY'
>;

function readable(variable: string, file: string): string {
  try {
    readFileSync(file);
  } catch (err) {
    throw new ConfigError(`Invalid configuration:\n  ${variable}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  return file;
}

/**
 * The inbox prefix of a NATS user (`_INBOX_<user>`): the replies to its requests arrive there, and
 * the generated permissions let only that user subscribe to it, so a compromised process cannot
 * read the answers meant for another (docs/deploy.md, "NATS users and permissions").
 */
export const inboxPrefixOf = (user: string): string => `_INBOX_${user.replace(/[^A-Za-z0-9_-]/g, '_')}`;

/**
 * What every process adds to nats.js' `connect` options for the NATS_USER/NATS_PASSWORD,
 * NATS_TOKEN, NATS_CREDS and NATS_TLS_* settings. With none of them set it returns `{}`: the
 * connection is exactly what it was without authentication. A contradictory combination (two
 * ways to authenticate, a password without a user, a certificate without its key) or a file that
 * cannot be read throws a ConfigError naming the variable.
 */
export function natsAuthOptions(config: Partial<NatsAuthConfig>): Partial<ConnectionOptions> {
  const opts: Partial<ConnectionOptions> = {};
  const methods = [config.NATS_USER && 'NATS_USER', config.NATS_TOKEN && 'NATS_TOKEN', config.NATS_CREDS && 'NATS_CREDS'].filter(Boolean);
  if (methods.length > 1) throw new ConfigError(`Invalid configuration:\n  ${methods.join(', ')}: set only one way to authenticate to NATS`);
  if (config.NATS_PASSWORD && !config.NATS_USER) throw new ConfigError('Invalid configuration:\n  NATS_PASSWORD: needs NATS_USER');
  if (config.NATS_USER) {
    opts.user = config.NATS_USER;
    if (config.NATS_PASSWORD) opts.pass = config.NATS_PASSWORD;
    // Replies come to an inbox of the user's own: the server lets no other user read them.
    opts.inboxPrefix = inboxPrefixOf(config.NATS_USER);
  }
  if (config.NATS_TOKEN) opts.token = config.NATS_TOKEN;
  if (config.NATS_CREDS) {
    const file = readable('NATS_CREDS', config.NATS_CREDS);
    // Read on every (re)connect, so a rotated creds file is picked up without a restart.
    opts.authenticator = credsAuthenticator(() => readFileSync(file));
  }
  if (Boolean(config.NATS_TLS_CERT) !== Boolean(config.NATS_TLS_KEY)) {
    throw new ConfigError(
      `Invalid configuration:\n  ${config.NATS_TLS_CERT ? 'NATS_TLS_KEY' : 'NATS_TLS_CERT'}: a client certificate needs both NATS_TLS_CERT and NATS_TLS_KEY`,
    );
  }
  if (config.NATS_TLS_CA || config.NATS_TLS_CERT) {
    const tls: TlsOptions = {};
    if (config.NATS_TLS_CA) tls.caFile = readable('NATS_TLS_CA', config.NATS_TLS_CA);
    if (config.NATS_TLS_CERT) tls.certFile = readable('NATS_TLS_CERT', config.NATS_TLS_CERT);
    if (config.NATS_TLS_KEY) tls.keyFile = readable('NATS_TLS_KEY', config.NATS_TLS_KEY);
    opts.tls = tls;
  }
  return opts;
}

/**
 * Every service's (and the gateway's) NATS pings: a connection whose server went silent (a
 * partition: no FIN, no RST) is found dead after two unanswered pings, about 20 s, and the client
 * reconnects and subscribes again. nats.js' default (every 2 min) left a replica cut off from NATS
 * without its subscriptions for minutes after the partition healed (the replica partition drill,
 * docs/deploy.md).
 */
export const NATS_LIVENESS = { pingInterval: 10_000, maxPingOut: 2 } as const;
