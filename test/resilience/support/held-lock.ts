import pg from 'pg';

/** An open transaction of the test that holds locks until released. */
export interface HeldLock {
  /** Rolls the transaction back: whoever waited on its locks goes on. */
  release(): Promise<void>;
}

/**
 * Runs `sql` in a transaction left open, so a service handler that needs the same rows (a row
 * locked FOR UPDATE, a key inserted but not committed) waits: a request or a durable message
 * stays "in hand" for exactly as long as the test wants, on the real database.
 */
export async function holdLock(databaseUrl: string, sql: string, params: unknown[] = []): Promise<HeldLock> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query('BEGIN');
  await client.query(sql, params);
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      await client.query('ROLLBACK').catch(() => undefined);
      await client.end();
    },
  };
}

/** Resolves once `count` sessions of the database wait on a lock (fails after `timeoutMs`). */
export async function waitForLockWaiters(databaseUrl: string, count = 1, timeoutMs = 10_000): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      );
      if (rows[0]!.n >= count) return;
      if (Date.now() > deadline) throw new Error(`no session waited on the held lock within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await client.end();
  }
}
