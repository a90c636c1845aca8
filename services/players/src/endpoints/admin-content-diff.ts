import { AdminContentDiff, endpoint, type Pool } from '@ccs/shared';
import { diffContent } from '../content/content-diff.js';
import { contentVersionOf, listContents } from '../repositories/apps-repo.js';
import { playerErrors } from '../errors.js';

/**
 * players.v1.admin_content_diff: what the app's current content changed from a stored version,
 * section by section. players keeps the content history, so the diff is computed here, not at the edge.
 */
export function adminContentDiffEndpoint(pool: Pool) {
  return endpoint(AdminContentDiff, async ({ appId, version }) => {
    const [current, versions] = await Promise.all([contentVersionOf(pool, appId), listContents(pool, appId)]);
    if (current === undefined) throw playerErrors.noApp(appId);
    const stored = (v: number) => {
      const found = versions.find((s) => s.version === v);
      if (!found) throw playerErrors.contentVersionNotFound(appId, v);
      return found.content;
    };
    const from = stored(version);
    return { fromVersion: version, toVersion: current, sections: diffContent(from, stored(current)) };
  });
}
