import { adminContentVersion, AppError, CONTENT_SERVICES } from '@ccs/shared';
import { adminCall, type AdminContext } from './output.js';

/** How one service took a content version: applied it, is not running, or has not applied it in time. */
export interface ServiceRollout {
  service: string;
  status: 'applied' | 'not_running' | 'behind';
  /** The version it holds now (null: none yet, or unknown when not running). */
  contentVersion: number | null;
  /** Seconds from the load to the moment it was seen applied. */
  seconds?: number;
}

const POLL_MS = 250;
const pad = (s: string) => s.padEnd(12);

/**
 * Waits (bounded by `waitSeconds`) until each service that applies content (wallet, chests,
 * collections) reports `version` of the app, printing a progress line as each one does. A service
 * with no replica running is reported at once: it applies the version from JetStream when it starts.
 */
export async function waitForRollout(c: AdminContext, appId: string, version: number, waitSeconds: number): Promise<ServiceRollout[]> {
  const began = Date.now();
  const deadline = began + waitSeconds * 1000;
  return Promise.all(
    CONTENT_SERVICES.map(async (service): Promise<ServiceRollout> => {
      let current: number | null = null;
      for (;;) {
        try {
          current = (await c.bus.request(adminContentVersion(service), { appId }, adminCall(), { timeoutMs: 5000 })).contentVersion;
        } catch (err) {
          // A timeout: a replica too busy to answer in time; asked again until the deadline.
          if (!(err instanceof AppError && (err.kind === 'unavailable' || err.kind === 'overloaded' || err.kind === 'timeout'))) throw err;
          if (err.kind !== 'timeout') {
            c.io.progress(`  ${pad(service)} not running: it applies version ${version} from JetStream when it starts`);
            return { service, status: 'not_running', contentVersion: null };
          }
        }
        if (current !== null && current >= version) {
          const seconds = Math.round((Date.now() - began) / 100) / 10;
          c.io.progress(`  ${pad(service)} applied version ${version} (${seconds.toFixed(1)} s)`);
          return { service, status: 'applied', contentVersion: current, seconds };
        }
        if (Date.now() >= deadline) {
          c.io.progress(
            `  ${pad(service)} still on version ${current ?? 'none'} after ${waitSeconds} s: ` +
              `check its log and its parked messages (npm run admin -- stats --app ${appId})`,
          );
          return { service, status: 'behind', contentVersion: current };
        }
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    }),
  );
}

/** One clause for the result line: "applied by wallet, chests, collections" and what is missing. */
export function describeRollout(rollout: ServiceRollout[]): string {
  const names = (s: ServiceRollout['status']) => rollout.filter((r) => r.status === s).map((r) => r.service);
  const parts: string[] = [];
  if (names('applied').length) parts.push(`applied by ${names('applied').join(', ')}`);
  if (names('not_running').length) parts.push(`${names('not_running').join(', ')} not running (they apply it when they start)`);
  if (names('behind').length) parts.push(`NOT yet applied by ${names('behind').join(', ')}`);
  return parts.join('; ');
}
