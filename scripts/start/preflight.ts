import { createServer } from 'node:net';
import type { z } from 'zod';
import { describeSecretProblems, secretProblems } from '../../packages/shared/src/config/config.js';
import { sagaTimeoutProblems } from '../../packages/shared/src/config/saga-timeouts.js';
import { ChestsConfigSchema } from '../../services/chests/src/config.js';
import { CollectionsConfigSchema } from '../../services/collections/src/config.js';
import { EgressConfigSchema } from '../../services/egress/src/config.js';
import { GatewayConfigSchema } from '../../services/gateway/src/config.js';
import { PlayersConfigSchema } from '../../services/players/src/config.js';
import { StoreConfigSchema } from '../../services/store/src/config.js';
import { WalletConfigSchema } from '../../services/wallet/src/config.js';
import type { ServiceName } from './service-process.js';

/** Each service's configuration schema: `npm start` checks them all before starting any service. */
const SCHEMAS: Record<ServiceName, z.ZodType> = {
  players: PlayersConfigSchema,
  chests: ChestsConfigSchema,
  collections: CollectionsConfigSchema,
  wallet: WalletConfigSchema,
  egress: EgressConfigSchema,
  store: StoreConfigSchema,
  gateway: GatewayConfigSchema,
};

/**
 * Every service's configuration as `npm start` would give it, checked up front: one line per bad
 * setting, naming the variable and the services that read it (a bad `PORT=abc` is found before
 * anything starts, not after four services are up).
 */
export function checkConfiguration(env: Record<string, string | undefined>): string[] {
  const problems = new Map<string, string[]>();
  for (const [service, schema] of Object.entries(SCHEMAS)) {
    const parsed = schema.safeParse(env);
    if (parsed.success) continue;
    for (const issue of parsed.error.issues) {
      const line = `${issue.path.join('.') || '(settings)'}=${JSON.stringify(env[String(issue.path[0])] ?? '')}: ${issue.message}`;
      problems.set(line, [...(problems.get(line) ?? []), service]);
    }
  }
  const lines = [...problems].map(
    ([line, services]) => `Invalid setting ${line} (read by ${services.join(', ')}); fix it or unset it to use the default.`,
  );
  if (lines.length) return lines;
  // Shipped placeholders as secrets, and (NODE_ENV=production) secrets left unset: what each service would refuse.
  const secrets = [...new Set(Object.values(SCHEMAS).flatMap((schema) => secretProblems(schema, env)))];
  if (secrets.length) return [describeSecretProblems(secrets)];
  // Each setting is valid on its own: now the bounds of the sagas against each other.
  const gateway = GatewayConfigSchema.parse(env);
  const chests = ChestsConfigSchema.parse(env);
  const players = PlayersConfigSchema.parse(env);
  const store = StoreConfigSchema.parse(env);
  return sagaTimeoutProblems({
    gatewayRequestTimeoutMs: gateway.NATS_REQUEST_TIMEOUT_MS,
    gatewayCredentialsTimeoutMs: gateway.CREDENTIALS_TIMEOUT_MS,
    chestsGrantWaitMs: chests.GRANT_WAIT_MS,
    playersGrantWaitMs: players.GRANT_WAIT_MS,
    playersPasswordQueueWaitMs: players.ARGON2_QUEUE_WAIT_MS,
    gatewayStoreTimeoutMs: gateway.STORE_TIMEOUT_MS,
    storeGoogleTimeoutMs: store.STORE_GOOGLE_TIMEOUT_MS,
    storeGrantWaitMs: store.GRANT_WAIT_MS,
  }).map((line) => `Invalid settings ${line}`);
}

/** Whether a TCP port can be listened on (all interfaces, as the gateway listens). */
export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '0.0.0.0', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** The ports the stack will listen on that another process holds, as one line each. */
export async function checkPorts(ports: { name: string; port: number }[]): Promise<string[]> {
  const lines: string[] = [];
  for (const { name, port } of ports) {
    if (port === 0) continue;
    if (!(await portFree(port))) {
      lines.push(`Port ${port} (${name}) is already in use: stop what listens there (lsof -i :${port}, or ss -ltnp) or set ${name}=<another port>.`);
    }
  }
  return lines;
}
