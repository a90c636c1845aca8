import { PlayerRulesSchema, type AppContent, type Queryable } from '@ccs/shared';
import type { z } from 'zod';
import { playerErrors } from '../errors.js';

/** The `players` section of an app's content: grants, starter chest and token lifetimes. */
export type PlayerRules = z.infer<typeof PlayerRulesSchema>;

/** Inserts an app with its player rules (content version 1). */
export async function insertApp(tx: Queryable, app: { id: string; name: string; isDemo: boolean; rules: PlayerRules }): Promise<void> {
  await tx.query('INSERT INTO apps (id, name, is_demo, player_rules) VALUES ($1, $2, $3, $4)', [app.id, app.name, app.isDemo, app.rules]);
}

/** The demo app's id, if it exists. */
export async function findDemoAppId(q: Queryable): Promise<string | undefined> {
  const { rows } = await q.query<{ id: string }>('SELECT id FROM apps WHERE is_demo');
  return rows[0]?.id;
}

/** The player rules of an app; 404 when the app does not exist. */
export async function playerRulesOf(q: Queryable, appId: string): Promise<PlayerRules> {
  const { rows } = await q.query<{ player_rules: unknown }>('SELECT player_rules FROM apps WHERE id = $1', [appId]);
  if (!rows[0]) throw playerErrors.appNotFound();
  return PlayerRulesSchema.parse(rows[0].player_rules);
}

/** Stores new player rules as the app's next content version; undefined when the app is unknown. */
export async function bumpContentVersion(tx: Queryable, appId: string, rules: PlayerRules): Promise<number | undefined> {
  const { rows } = await tx.query<{ content_version: number }>(
    'UPDATE apps SET player_rules = $2, content_version = content_version + 1 WHERE id = $1 RETURNING content_version',
    [appId, rules],
  );
  return rows[0]?.content_version;
}

/** Keeps a content version as loaded (the admin API lists and diffs them). */
export async function storeContent(tx: Queryable, appId: string, version: number, content: AppContent): Promise<void> {
  await tx.query('INSERT INTO app_contents (app_id, version, content) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
    appId,
    version,
    JSON.stringify(content),
  ]);
}

/** The app's stored content versions, newest first, with when each was loaded. */
export async function listContents(q: Queryable, appId: string): Promise<{ version: number; loadedAt: Date; content: AppContent }[]> {
  const r = await q.query<{ version: number; loaded_at: Date; content: AppContent }>(
    'SELECT version, loaded_at, content FROM app_contents WHERE app_id = $1 ORDER BY version DESC',
    [appId],
  );
  return r.rows.map((row) => ({ version: row.version, loadedAt: row.loaded_at, content: row.content }));
}

/** The app's current content version; undefined for an unknown app. */
export async function contentVersionOf(q: Queryable, appId: string): Promise<number | undefined> {
  const r = await q.query<{ content_version: number }>('SELECT content_version FROM apps WHERE id = $1', [appId]);
  return r.rows[0]?.content_version;
}

/** Locks the app's row for the transaction (false: no such app); changes to one app's keys run one after the other. */
export async function lockApp(tx: Queryable, appId: string): Promise<boolean> {
  const { rowCount } = await tx.query('SELECT 1 FROM apps WHERE id = $1 FOR UPDATE', [appId]);
  return (rowCount ?? 0) > 0;
}

/** Takes the transaction's lock on creating the demo app, so replicas starting together never make two. */
export async function lockDemoAppCreation(tx: Queryable): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtext('players.demo_app'))");
}
