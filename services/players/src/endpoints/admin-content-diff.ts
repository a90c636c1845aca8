import { AdminContentDiff, AppError, endpoint, type Pool } from '@ccs/shared';
import { diffContent } from '../content/content-diff.js';
import { contentVersionOf, listContents } from '../repositories/apps-repository.js';

/**
 * players.v1.admin_content_diff: what the app's current content changed from a stored version,
 * section by section. players keeps the content history, so the diff is computed here, not at the edge.
 */
export function adminContentDiffEndpoint(pool: Pool) {
  return endpoint(AdminContentDiff, async ({ appId, version }) => {
    const [current, versions] = await Promise.all([contentVersionOf(pool, appId), listContents(pool, appId)]);
    if (current === undefined) throw AppError.notFound('app_not_found', `No app ${appId}.`);
    const stored = (v: number) => {
      const found = versions.find((s) => s.version === v);
      if (!found) throw AppError.notFound('content_version_not_found', `App ${appId} has no stored content version ${v}.`, { parameter: 'version' });
      return found.content;
    };
    const from = stored(version);
    return { fromVersion: version, toVersion: current, sections: diffContent(from, stored(current)) };
  });
}
