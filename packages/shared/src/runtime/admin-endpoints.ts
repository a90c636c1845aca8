import type { z } from 'zod';
import { adminContentVersion, type CONTENT_SERVICES } from '../contracts/admin.js';
import type { ReplyOf, SubjectContract } from '../contracts/subject.js';
import { appliedContentVersion } from '../db/applied-content-version.js';
import type { Pool } from '../db/pool.js';
import { messagingStats } from '../messaging/messaging-stats.js';
import { endpoint } from './endpoint.js';

/**
 * The operator command every content service answers: which content version of an app it has
 * applied (the admin CLI polls it after a load). Each service's schema has the same `apps` table.
 */
export function contentVersionEndpoint(service: (typeof CONTENT_SERVICES)[number], pool: Pool) {
  return endpoint(adminContentVersion(service), async (req) => ({ service, contentVersion: await appliedContentVersion(pool, req.appId) }));
}

/** The figures a content service adds to its stats (everything but the common part). */
type OwnFigures<C extends SubjectContract> = Omit<ReplyOf<C>, 'service' | 'contentVersion' | 'messaging'>;

/**
 * The operator command every content service answers with its own figures of an app: the common
 * part (the service, the content version it applied, its messaging figures) and `figures`, read in
 * parallel.
 */
export function contentStatsEndpoint<C extends SubjectContract<z.ZodType<{ appId: string }>>>(
  contract: C,
  service: (typeof CONTENT_SERVICES)[number],
  pool: Pool,
  figures: (appId: string) => Promise<OwnFigures<C>>,
) {
  return endpoint(contract, async (req) => {
    const [contentVersion, own, messaging] = await Promise.all([
      appliedContentVersion(pool, req.appId),
      figures(req.appId),
      messagingStats(pool, req.appId),
    ]);
    return { service, contentVersion, ...own, messaging } as ReplyOf<C>;
  });
}
