import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { preparedStatement, preparedStatementsOn, usePreparedStatements } from '../src/index.js';
import { createTestDatabase, testInfra } from '../src/testing/index.js';

// Named statements (db/prepared.ts) against real Postgres: a named one is prepared once on the
// connection (pg_prepared_statements lists it) and answers as the unnamed text would; with
// PG_PREPARED_STATEMENTS=off nothing is prepared on the connection.

describe('named statements', () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: pg.Pool;

  beforeAll(async () => {
    db = await createTestDatabase(await testInfra());
    // One connection, so the statement's preparation and the check see the same session.
    pool = new pg.Pool({ connectionString: db.url, max: 1 });
    // As createPool does: an idle connection Postgres ends (the database dropped at teardown) must not crash the run.
    pool.on('error', () => undefined);
  });
  afterEach(() => usePreparedStatements(true));
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  const preparedOnConnection = async () =>
    (await pool.query<{ name: string }>('SELECT name FROM pg_prepared_statements ORDER BY name')).rows.map((r) => r.name);

  it('prepares a named statement once per connection and answers as the plain text does', async () => {
    expect(preparedStatementsOn()).toBe(true);
    const add = preparedStatement('test_prepared_add', 'SELECT $1::int + $2::int AS n');
    for (let i = 0; i < 7; i++) {
      const r = await pool.query<{ n: number }>(add.with([i, 10]));
      expect(r.rows[0]!.n).toBe(i + 10);
    }
    expect(await preparedOnConnection()).toContain('test_prepared_add');
    const plain = await pool.query<{ n: number }>(add.text, [5, 6]);
    expect(plain.rows[0]!.n).toBe(11);
  });

  it('sends the text unnamed when prepared statements are off (PgBouncer before 1.21 in transaction mode)', async () => {
    usePreparedStatements(false);
    const sub = preparedStatement('test_prepared_sub', 'SELECT $1::int - $2::int AS n');
    expect(sub.with([3, 1])).toEqual({ text: 'SELECT $1::int - $2::int AS n', values: [3, 1] });
    const r = await pool.query<{ n: number }>(sub.with([3, 1]));
    expect(r.rows[0]!.n).toBe(2);
    expect(await preparedOnConnection()).not.toContain('test_prepared_sub');
  });

  it('refuses one name for two texts, and names Postgres would not take as written', () => {
    preparedStatement('test_prepared_same', 'SELECT 1');
    expect(() => preparedStatement('test_prepared_same', 'SELECT 1')).not.toThrow();
    expect(() => preparedStatement('test_prepared_same', 'SELECT 2')).toThrow(/two statements are named test_prepared_same/);
    expect(() => preparedStatement('Bad-Name', 'SELECT 1')).toThrow(/lower case/);
  });
});
