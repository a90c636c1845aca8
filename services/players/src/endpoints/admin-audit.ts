import { AdminListAudit, AdminListContentVersions, AdminRecordAudit, endpoint, type Pool } from '@ccs/shared';
import { appendAuditEntry, listAuditEntries } from '../repositories/admin-audit-repo.js';
import { contentVersionOf, listContents } from '../repositories/apps-repo.js';
import { playerErrors } from '../errors.js';

/** players.v1.admin_record_audit: one admin API call that acted, appended to the app's audit log with its note. */
export function adminRecordAuditEndpoint(pool: Pool) {
  return endpoint(AdminRecordAudit, async ({ appId, ...entry }) => {
    await appendAuditEntry(pool, appId, entry);
    return {};
  });
}

/** players.v1.admin_list_audit: the app's audit log, newest first, paginated. */
export function adminListAuditEndpoint(pool: Pool) {
  return endpoint(AdminListAudit, async ({ appId, page }) => listAuditEntries(pool, appId, page));
}

/** players.v1.admin_content_versions: the app's stored content versions, newest first, with their sizes. */
export function adminListContentVersionsEndpoint(pool: Pool) {
  return endpoint(AdminListContentVersions, async ({ appId }) => {
    const [current, versions] = await Promise.all([contentVersionOf(pool, appId), listContents(pool, appId)]);
    if (current === undefined) throw playerErrors.noApp(appId);
    return {
      current,
      versions: versions.map((v) => ({
        version: v.version,
        loadedAt: v.loadedAt.toISOString(),
        counts: {
          currencies: v.content.currencies.length,
          rarities: v.content.rarities.length,
          collections: v.content.collections.length,
          collectibles: v.content.collections.reduce((n, c) => n + c.collectibles.length, 0),
          chests: v.content.chests.length,
        },
      })),
    };
  });
}
