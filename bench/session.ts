/**
 * What one bench run created (its processes, database, monitor connection, private Postgres
 * cluster, content file, NATS streams and Redis keys) and their removal at the end, on failure
 * and on Ctrl-C too.
 */
import { connect } from 'nats';
import { rmSync } from 'node:fs';
import type pg from 'pg';
import { deleteRedisKeys, type createTestDatabase, type PrivatePostgres, type testInfra } from '@ccs/shared/testing';
import { stopAll, type BenchProcess } from './stack-process.js';

export type Infra = Awaited<ReturnType<typeof testInfra>>;
export type Database = Awaited<ReturnType<typeof createTestDatabase>>;
export type Log = (line: string) => void;

export class BenchSession {
  readonly procs: BenchProcess[] = [];
  db?: Database;
  monitor?: pg.Client;
  cluster?: PrivatePostgres;
  private cleaning?: Promise<void>;
  private firstSignalAt = 0;

  constructor(
    readonly infra: Infra,
    readonly prefix: string,
    private readonly contentFile: string,
    private readonly log: Log,
  ) {}

  /** A process that exited without being asked to, if any. */
  dead(): BenchProcess | undefined {
    return this.procs.find((p) => p.unexpectedExit);
  }

  /** Stops the stack and removes what the run created; once, however often it is called. */
  cleanup(): Promise<void> {
    return (this.cleaning ??= this.clean());
  }

  private async clean(): Promise<void> {
    this.log('stopping the stack and removing what the bench created (database, NATS streams, Redis keys) ...');
    await this.monitor?.end().catch(() => undefined);
    await stopAll(this.procs);
    const steps: [string, () => Promise<unknown>][] = [
      ['NATS streams', () => deleteStreams(this.infra.natsUrl, this.prefix)],
      ['Redis keys', () => deleteRedisKeys(this.infra.redisUrl, `${this.prefix}:`)],
      ['database', () => this.db?.drop() ?? Promise.resolve()],
      ['private Postgres cluster', () => this.cluster?.destroy() ?? Promise.resolve()],
    ];
    for (const [what, step] of steps) await step().catch((err) => console.error(`[bench] could not remove the ${what}: ${String(err)}`));
    rmSync(this.contentFile, { force: true });
    this.log('cleaned up');
  }

  /**
   * Ctrl-C reaches the bench twice at once (from the terminal, and relayed by npm and tsx):
   * every signal must be handled, or the second one would end the process in the middle of its
   * cleanup. Only a signal well after the first (a second Ctrl-C) gives up on cleaning up.
   */
  cleanUpOnSignals(): void {
    const onSignal = (signal: NodeJS.Signals) => this.onSignal(signal);
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }

  private onSignal(signal: NodeJS.Signals): void {
    if (this.firstSignalAt) {
      if (Date.now() - this.firstSignalAt < 2000) return;
      const db = this.db;
      console.error(
        `[bench] ${signal} again: exiting without finishing the cleanup (prefix ${this.prefix}, ${db ? `database ${new URL(db.url).pathname.slice(1)}` : 'no database yet'})`,
      );
      process.exit(130);
    }
    this.firstSignalAt = Date.now();
    this.log(`${signal}: cleaning up before exiting (Ctrl-C again to skip)`);
    void this.cleanup().finally(() => process.exit(130));
  }

  /** On a failure: the last output of every process that did not report its own exit. */
  printTails(): void {
    for (const x of this.procs)
      if (x.tail().trim() && !x.unexpectedExit) console.error(`[bench] last output of ${x.label}:\n${x.tail().slice(-1500)}`);
  }
}

/** Deletes every JetStream stream of this run's prefix (the grants stream, the floor's); their consumers go with them. */
async function deleteStreams(natsUrl: string, prefix: string): Promise<void> {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await nc.jetstreamManager();
    const names: string[] = [];
    for await (const s of jsm.streams.list()) if (s.config.name.startsWith(`${prefix}_`)) names.push(s.config.name);
    for (const name of names) await jsm.streams.delete(name);
  } finally {
    await nc.close();
  }
}
