/**
 * What one chaos run made (the private Postgres cluster and nats-server, the services, the pool,
 * the Redis keys of its prefix, the services' log folder) and its removal, whatever happens.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import type { PrivatePostgres } from '@ccs/shared/testing';
import { deleteRedisKeys, type PrivateNats } from './infra.js';
import type { ChaosStack } from './stack.js';

export class ChaosRunState {
  postgres?: PrivatePostgres;
  nats?: PrivateNats;
  stack?: ChaosStack;
  db?: pg.Pool;
  keepLogs = false;
  redisReached = false;
  readonly logDir = mkdtempSync(join(tmpdir(), 'ccs-chaos-'));
  readonly logFile = join(this.logDir, 'services.log');
  private cleaning?: Promise<void>;

  constructor(
    readonly prefix: string,
    readonly redisUrl: string,
    private readonly log: (line: string) => void,
  ) {}

  /** Stops and removes everything; once, however often it is called. */
  cleanup(): Promise<void> {
    return (this.cleaning ??= this.clean());
  }

  private async clean(): Promise<void> {
    const { log, prefix } = this;
    log('cleaning up: stopping the services, the private nats-server and Postgres cluster, removing the Redis keys ...');
    await this.stack?.stopAll(10_000);
    await this.db?.end().catch(() => undefined);
    await this.nats?.destroy().catch((err) => log(`could not stop the private nats-server: ${String(err)}`));
    await this.postgres?.destroy().catch((err) => log(`could not remove the private Postgres cluster: ${String(err)}`));
    if (this.redisReached)
      await deleteRedisKeys(this.redisUrl, `${prefix}:`).catch((err) => log(`could not remove the Redis keys ${prefix}:*: ${String(err)}`));
    if (this.keepLogs) log(`the services' logs are kept in ${this.logFile}`);
    else rmSync(this.logDir, { recursive: true, force: true });
  }
}
