import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { sagaTimeoutProblems } from '@ccs/shared';
import { ChestsConfigSchema } from '../../services/chests/src/config.js';
import { GatewayConfigSchema } from '../../services/gateway/src/config.js';
import { PlayersConfigSchema } from '../../services/players/src/config.js';
import { checkConfiguration } from '../../scripts/start/preflight.js';
import { parseEnvFile } from '../support/kustomize.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The saga bounds as the processes would read them from one environment (defaults applied). */
function boundsOf(env: Record<string, string | undefined>) {
  const gateway = GatewayConfigSchema.parse(env);
  const chests = ChestsConfigSchema.parse(env);
  const players = PlayersConfigSchema.parse(env);
  return {
    gatewayRequestTimeoutMs: gateway.NATS_REQUEST_TIMEOUT_MS,
    gatewayCredentialsTimeoutMs: gateway.CREDENTIALS_TIMEOUT_MS,
    chestsGrantWaitMs: chests.GRANT_WAIT_MS,
    playersGrantWaitMs: players.GRANT_WAIT_MS,
    playersPasswordQueueWaitMs: players.ARGON2_QUEUE_WAIT_MS,
  };
}

describe('the sagas never answer 504 after their work completed', () => {
  it('keeps GRANT_WAIT_MS below the gateway bounds with the defaults and with the deployed settings', () => {
    expect(sagaTimeoutProblems(boundsOf({}))).toEqual([]);
    const deployed = Object.fromEntries(parseEnvFile(`${ROOT}deploy/k8s/base/config.env`));
    expect(sagaTimeoutProblems(boundsOf(deployed))).toEqual([]);
    const compose = readFileSync(`${ROOT}docker-compose.yml`, 'utf8');
    const set = (name: string) => compose.match(new RegExp(`${name}[=:]\\s*"?(\\d+)`))?.[1];
    const fromCompose = Object.fromEntries(
      ['GRANT_WAIT_MS', 'NATS_REQUEST_TIMEOUT_MS', 'CREDENTIALS_TIMEOUT_MS', 'ARGON2_QUEUE_WAIT_MS'].flatMap((n) => (set(n) ? [[n, set(n)]] : [])),
    );
    expect(sagaTimeoutProblems(boundsOf(fromCompose))).toEqual([]);
  });

  it('names the settings that would let a consumed chest or a created player answer 504', () => {
    expect(sagaTimeoutProblems(boundsOf({ GRANT_WAIT_MS: '4500' }))).toEqual([
      'GRANT_WAIT_MS (chests) vs NATS_REQUEST_TIMEOUT_MS (gateway): an opening waits up to 4500 ms but the gateway gives it 5000 ms; keep the wait at least 1000 ms below the bound.',
      'GRANT_WAIT_MS (players) vs NATS_REQUEST_TIMEOUT_MS (gateway): a guest creation waits up to 4500 ms but the gateway gives it 5000 ms; keep the wait at least 1000 ms below the bound.',
    ]);
    expect(sagaTimeoutProblems(boundsOf({ CREDENTIALS_TIMEOUT_MS: '6000' }))).toEqual([
      'ARGON2_QUEUE_WAIT_MS + GRANT_WAIT_MS (players) vs CREDENTIALS_TIMEOUT_MS (gateway): a registration (password queue and grant wait) waits up to 7000 ms but the gateway gives it 6000 ms; keep the wait at least 1000 ms below the bound.',
    ]);
  });

  it('is checked by npm start before anything starts', () => {
    expect(checkConfiguration({ NATS_REQUEST_TIMEOUT_MS: '2500' })).toEqual([
      expect.stringMatching(/^Invalid settings GRANT_WAIT_MS \(chests\) vs NATS_REQUEST_TIMEOUT_MS \(gateway\): an opening waits up to 2000 ms/),
      expect.stringMatching(/^Invalid settings GRANT_WAIT_MS \(players\) vs NATS_REQUEST_TIMEOUT_MS/),
    ]);
    expect(checkConfiguration({})).toEqual([]);
  });
});
