import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  AdminExportBannerRules,
  AdminExportOpenings,
  AdminExportRules,
  AdminOddsLog,
  AppError,
  oddsLogRecord,
  type AuditOpening,
  type ReplyOf,
} from '@ccs/shared';
import { AdminFailure, adminCall, required, requiredAppId, UsageError, type AdminContext } from '../output.js';
import { JsonLinesFile, type WrittenFile } from './audit-files.js';
import { storePage, writeStoreTransactions } from './audit-store.js';

// `export-audit`: the auditor's export (docs/design.md §7, docs/operations.md "export-audit"),
// checked offline by `node scripts/verify-opening.mjs --audit <dir>`.

/** Openings asked per page: a page of big openings stays well under NATS's 1 MB message limit. */
const PAGE = 200;
/** A progress line on stderr every this many openings. */
const PROGRESS_EVERY = 5000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;

/** A --from/--to value: a date (UTC midnight; for --to the midnight after it, so the day is included) or an ISO 8601 time with its offset. */
function instant(value: string | undefined, flag: 'from' | 'to'): Date {
  const text = required(value, flag);
  const date = DATE.test(text) ? new Date(`${text}T00:00:00.000Z`) : DATE_TIME.test(text) ? new Date(text) : undefined;
  if (!date || Number.isNaN(date.getTime()) || (DATE.test(text) && date.toISOString().slice(0, 10) !== text))
    throw new UsageError(`--${flag} takes a date (2026-11-01) or a time with its offset (2026-11-01T12:00:00Z), not "${text}"`);
  if (flag === 'to' && DATE.test(text)) date.setUTCDate(date.getUTCDate() + 1);
  return date;
}

/** The period [from, to) the options name; --to must come after --from. */
export function auditPeriod(o: { from?: string; to?: string }): { from: string; to: string } {
  const from = instant(o.from, 'from');
  const to = instant(o.to, 'to');
  if (to.getTime() <= from.getTime())
    throw new UsageError(`--to (${to.toISOString()}) is not after --from (${from.toISOString()}): the period runs from --from up to --to`);
  return { from: from.toISOString(), to: to.toISOString() };
}

/** Refuses an output directory that is not new or empty (an export never mixes with other files). */
async function requireEmptyDirectory(dir: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code === 'ENOTDIR') throw new AdminFailure(`--out ${dir} is a file: give a new or empty directory.`);
    throw err;
  }
  if (entries.length)
    throw new AdminFailure(
      `--out ${dir} is not empty (${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}): give a new or empty directory; an export never overwrites files.`,
    );
}

/** The whole odds log of the app (every page): the chain runs from its first entry, whatever the period. */
async function oddsLog(c: AdminContext, appId: string): Promise<ReplyOf<typeof AdminOddsLog>['entries']> {
  const entries: ReplyOf<typeof AdminOddsLog>['entries'] = [];
  for (;;) {
    const page = await c.bus.request(AdminOddsLog, { appId, page: { limit: 100, offset: entries.length } }, adminCall(), { timeoutMs: 10_000 });
    entries.push(...page.entries);
    if (!page.entries.length || entries.length >= page.total) return entries;
  }
}

/** One opening as a line of openings.jsonl (snake_case, as the public documents and the verifier read it). */
const openingLine = (o: AuditOpening) => ({
  opening_id: o.openingId,
  player_id: o.playerId,
  chest_type_id: o.chestTypeId,
  rules_version: o.rulesVersion,
  opened_at: o.openedAt,
  revealed: o.fairness?.serverSeed != null,
  server_seed: o.fairness?.serverSeed ?? null,
  server_seed_hash: o.fairness?.serverSeedHash ?? null,
  client_seed: o.fairness?.clientSeed ?? null,
  nonce: o.fairness?.nonce ?? null,
  seed_revealed_at: o.fairness?.revealedAt ?? null,
  pity: o.pity && {
    group: o.pity.group,
    rarity: o.pity.rarity,
    opens_since_before: o.pity.opensSinceBefore,
    opens_since_after: o.pity.opensSinceAfter,
    triggered: o.pity.triggered,
  },
  items: o.items.map((it) => ({ slot: it.slot, collectible_id: it.collectibleId, rarity: it.rarity })),
  // A banner pull's opening: its record and the banner's rules (with their logged version), which its re-roll needs.
  banner: o.banner && {
    id: o.banner.bannerId,
    featured: o.banner.featured,
    guaranteed_before: o.banner.guaranteedBefore,
    floor_rerolled: o.banner.floorRerolled,
    rules_version: o.banner.rulesVersion,
    rules: o.banner.rules,
  },
});

/** Counts of the openings written. */
interface OpeningCounts {
  openings: number;
  revealed: number;
  unrevealed: number;
  without_fairness: number;
}

/** The (chest type, rules version) and (banner, rules version) pairs whose rules rules.jsonl carries. */
interface RulesPairs {
  chests: Map<string, { chestTypeId: string; rulesVersion: number }>;
  banners: Map<string, { bannerId: string; rulesVersion: number }>;
}

/** Streams the period's openings, page by page, into openings.jsonl; answers the counts and the rules pairs met. */
async function writeOpenings(c: AdminContext, appId: string, period: { from: string; to: string }, file: JsonLinesFile) {
  const counts: OpeningCounts = { openings: 0, revealed: 0, unrevealed: 0, without_fairness: 0 };
  const versions: RulesPairs = { chests: new Map(), banners: new Map() };
  let cursor: string | undefined;
  do {
    const page = await c.bus.request(AdminExportOpenings, { appId, ...period, limit: PAGE, ...(cursor ? { cursor } : {}) }, adminCall(), {
      timeoutMs: 30_000,
    });
    for (const o of page.openings) {
      await file.write(openingLine(o));
      counts.openings++;
      if (!o.fairness) counts.without_fairness++;
      else if (o.fairness.serverSeed !== null) counts.revealed++;
      else counts.unrevealed++;
      versions.chests.set(`${o.chestTypeId}:${o.rulesVersion}`, { chestTypeId: o.chestTypeId, rulesVersion: o.rulesVersion });
      if (o.banner?.rulesVersion)
        versions.banners.set(`${o.banner.bannerId}:${o.banner.rulesVersion}`, { bannerId: o.banner.bannerId, rulesVersion: o.banner.rulesVersion });
      if (counts.openings % PROGRESS_EVERY === 0) c.io.progress(`  ${counts.openings} openings written (${counts.revealed} with revealed seeds)`);
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return { counts, versions };
}

/**
 * Writes rules.jsonl, asked 100 at a time: the rules and rule inputs of every (chest type, rules
 * version) pair, then the rules of every (banner, rules version) pair (lines with `banner_id`).
 */
async function writeRules(c: AdminContext, appId: string, pairs: RulesPairs, file: JsonLinesFile) {
  let missing = 0;
  const chests = [...pairs.chests.values()];
  for (let i = 0; i < chests.length; i += 100) {
    const asked = chests.slice(i, i + 100);
    const { rules } = await c.bus.request(AdminExportRules, { appId, versions: asked }, adminCall(), { timeoutMs: 30_000 });
    missing += asked.length - rules.length;
    for (const r of rules)
      await file.write({ chest_type_id: r.chestTypeId, rules_version: r.rulesVersion, rules: r.rules, rule_inputs: r.ruleInputs });
  }
  const banners = [...pairs.banners.values()];
  for (let i = 0; i < banners.length; i += 100) {
    const asked = banners.slice(i, i + 100);
    const { rules } = await c.bus.request(AdminExportBannerRules, { appId, versions: asked }, adminCall(), { timeoutMs: 30_000 });
    missing += asked.length - rules.length;
    for (const r of rules) await file.write({ banner_id: r.bannerId, rules_version: r.rulesVersion, rules: r.rules });
  }
  return missing;
}

/**
 * `export-audit --app <id> --from <date> --to <date> --out <dir>`: writes openings.jsonl (the
 * period's openings: inputs, items, pity, rules version, a banner pull's banner rules and their
 * version; seeds where revealed), rules.jsonl (the rules each rolled, and each odds log entry's,
 * chest types' and banners'), odds-log.json (the whole log), store-transactions.jsonl (the App
 * Store and Google Play transactions verified in the period, each with its refunds) and
 * manifest.json (period, counts, SHA-256 of each file).
 */
export async function exportAuditCommand(c: AdminContext, o: { app?: string; from?: string; to?: string; out?: string }): Promise<number> {
  const appId = requiredAppId(o.app);
  const period = auditPeriod(o);
  const dir = path.resolve(required(o.out, 'out'));
  await requireEmptyDirectory(dir);
  // The log first: chests answers app_not_found for an app it does not know, before anything is written.
  const log = await oddsLog(c, appId).catch((err: unknown) => {
    if (err instanceof AppError && (err.kind === 'unavailable' || err.kind === 'overloaded' || err.kind === 'timeout'))
      throw new AdminFailure('The chests service did not answer: start the stack with `npm start`.');
    throw err;
  });
  // The store's first page too: a store service that does not answer refuses the export before anything is written.
  const firstStorePage = await storePage(c, appId, period);
  await mkdir(dir, { recursive: true });
  c.io.progress(`Exporting openings of app ${appId} from ${period.from} to ${period.to} into ${dir}`);
  const openingsFile = new JsonLinesFile(dir, 'openings.jsonl');
  const { counts, versions } = await writeOpenings(c, appId, period, openingsFile).finally(() => openingsFile.close());
  for (const e of log)
    if (e.bannerId !== undefined) versions.banners.set(`${e.bannerId}:${e.rulesVersion}`, { bannerId: e.bannerId, rulesVersion: e.rulesVersion });
    else versions.chests.set(`${e.chestTypeId}:${e.rulesVersion}`, { chestTypeId: e.chestTypeId!, rulesVersion: e.rulesVersion });
  const rulesFile = new JsonLinesFile(dir, 'rules.jsonl');
  const rulesMissing = await writeRules(c, appId, versions, rulesFile).finally(() => rulesFile.close());
  const logFile = new JsonLinesFile(dir, 'odds-log.json');
  await logFile.writeText(`${JSON.stringify(log.map(logEntryOf), null, 1)}\n`);
  const storeFile = new JsonLinesFile(dir, 'store-transactions.jsonl');
  const store = await writeStoreTransactions(c, appId, period, firstStorePage, storeFile).finally(() => storeFile.close());
  const files: Record<string, WrittenFile> = {
    'openings.jsonl': await openingsFile.close(),
    'rules.jsonl': await rulesFile.close(),
    'odds-log.json': await logFile.close(),
    'store-transactions.jsonl': await storeFile.close(),
  };
  const manifest = {
    // Version 2 adds store-transactions.jsonl.
    format: 'ccs-audit-export/2',
    app_id: appId,
    period,
    exported_at: new Date().toISOString(),
    counts: { ...counts, rules: files['rules.jsonl']!.lines, rules_missing: rulesMissing, odds_log_entries: log.length, ...store },
    files,
  };
  await writeFile(path.join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`, { flag: 'wx' });
  if (c.json) c.io.out(JSON.stringify({ dir, ...manifest }, null, 2));
  else
    c.io.out(
      `Exported ${counts.openings} opening(s) of app ${appId} (${counts.revealed} with revealed seeds, ${counts.unrevealed} not revealed yet), ` +
        `${files['rules.jsonl']!.lines} rules version(s), ${log.length} odds log entr${log.length === 1 ? 'y' : 'ies'} ` +
        `and ${store.store_transactions} store transaction(s) (${store.store_refunds} refund(s) and reversal(s)) into ${dir}.\n` +
        `Verify with: node scripts/verify-opening.mjs --audit ${dir}`,
    );
  return 0;
}

/** An odds log entry as GET /api/v1/odds-log's attributes name it (what --odds-log reads). */
const logEntryOf = oddsLogRecord;
