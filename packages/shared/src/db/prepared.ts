import type pg from 'pg';

/**
 * Named (prepared) statements for the hot paths. An unnamed statement is parsed, analysed and
 * planned by Postgres on every call; for the opening's statement that was about half of its
 * Postgres time (docs/performance.md, "Named statements"). A named one is parsed once per
 * connection (node-postgres remembers which names each connection has prepared) and, after five
 * calls, runs a cached generic plan when that plan is no worse than the custom ones.
 *
 * Behind PgBouncer in transaction mode before 1.21 (Debian 12 ships 1.18), a statement prepared
 * on one server connection is unknown on the next: set `PG_PREPARED_STATEMENTS=off` there and
 * every statement goes unnamed again. PgBouncer 1.21 and later with `max_prepared_statements` set
 * keeps them working.
 */
let named = true;

/** Turns named statements on or off for the process (the services' PG_PREPARED_STATEMENTS, set once at start). */
export function usePreparedStatements(on: boolean): void {
  named = on;
}

/** Whether statements go named (prepared) in this process. */
export function preparedStatementsOn(): boolean {
  return named;
}

const texts = new Map<string, string>();

/** One statement with a name of its own: `db.query(STATEMENT.with(values))`. */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
  /** The query to run: named when prepared statements are on, else the same text unnamed. */
  with(values: unknown[]): pg.QueryConfig;
}

/**
 * Declares a named statement. Names are process-wide, as they are per connection in Postgres: one
 * name with two texts would run the first text for both, so that is refused at once.
 */
export function preparedStatement(name: string, text: string): PreparedStatement {
  if (!/^[a-z][a-z0-9_]*$/.test(name)) throw new Error(`statement name ${name}: lower case letters, digits and _`);
  const known = texts.get(name);
  if (known !== undefined && known !== text) throw new Error(`two statements are named ${name}`);
  texts.set(name, text);
  return {
    name,
    text,
    with: (values) => (named ? { name, text, values } : { text, values }),
  };
}
