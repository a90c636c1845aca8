import { ComplianceSchema, StoreContentSchema, type AppContent, type ComplianceRules, type Queryable, type StoreContent } from '@ccs/shared';

/** What the store keeps of one content version of an app. */
export interface StoreSnapshot {
  appId: string;
  version: number;
  /** The store section (undefined: the app sells nothing through the stores). */
  store?: StoreContent;
  compliance?: ComplianceRules;
  currencies: string[];
}

/**
 * Stores a content version's store section and compliance and, when it is newer than the current
 * one, makes it current. Returns whether it became current. In a transaction: the app's row is
 * locked, so versions apply in order.
 */
export async function applyContentVersion(tx: Queryable, appId: string, version: number, content: AppContent): Promise<boolean> {
  await tx.query(
    `INSERT INTO content_versions (app_id, version, store, compliance, currencies) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (app_id, version) DO NOTHING`,
    [
      appId,
      version,
      content.store ? JSON.stringify(content.store) : null,
      content.compliance ? JSON.stringify(content.compliance) : null,
      content.currencies.map((c) => c.code),
    ],
  );
  await tx.query('INSERT INTO apps (app_id) VALUES ($1) ON CONFLICT (app_id) DO NOTHING', [appId]);
  const r = await tx.query('UPDATE apps SET content_version = $2, updated_at = now() WHERE app_id = $1 AND content_version < $2', [appId, version]);
  return (r.rowCount ?? 0) > 0;
}

/** The app's current content version number (undefined before its content arrived). */
export async function currentVersion(db: Queryable, appId: string): Promise<number | undefined> {
  const r = await db.query<{ v: number }>('SELECT content_version AS v FROM apps WHERE app_id = $1 AND content_version > 0', [appId]);
  return r.rows[0]?.v;
}

/** One stored content version (immutable once written). */
export async function loadContentVersion(db: Queryable, appId: string, version: number): Promise<StoreSnapshot | undefined> {
  const r = await db.query<{ store: unknown; compliance: unknown; currencies: string[] }>(
    'SELECT store, compliance, currencies FROM content_versions WHERE app_id = $1 AND version = $2',
    [appId, version],
  );
  const row = r.rows[0];
  if (!row) return undefined;
  return {
    appId,
    version,
    ...(row.store ? { store: StoreContentSchema.parse(row.store) } : {}),
    ...(row.compliance ? { compliance: ComplianceSchema.parse(row.compliance) } : {}),
    currencies: row.currencies,
  };
}
