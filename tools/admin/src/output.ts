import { randomUUID } from 'node:crypto';
import { AdminFindPlayer, AdminListApps, AppError, type Bus, type CallContext, type ReplyOf } from '@ccs/shared';

/** Where a command writes: results on stdout (JSON with --json), progress and notes on stderr. */
export interface AdminIo {
  out(line: string): void;
  progress(line: string): void;
}

/** What every admin command gets: the bus to the services, the output, and the options shared by all. */
export interface AdminContext {
  bus: Bus;
  io: AdminIo;
  /** Machine output: one JSON document on stdout, nothing else there. */
  json: boolean;
  /** The largest message the NATS server accepts (its max_payload), in bytes. */
  maxPayload: number;
}

/** A fresh call context: every admin request gets its own request id (it shows in the services' logs). */
export const adminCall = (): CallContext => ({ requestId: `admin-${randomUUID()}` });

/** A wrong command line: printed with the usage, exit code 2. */
export class UsageError extends Error {}

/** A failure the operator can act on, printed as is (exit code 1). */
export class AdminFailure extends Error {}

/** A required option's value, or a UsageError naming it. */
export function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`missing --${flag}`);
  return value;
}

/** The --app option: required, and an app id (a UUID, as list-apps shows). */
export function requiredAppId(value: string | undefined): string {
  const id = required(value, 'app');
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) {
    throw new UsageError(`--app takes an app id (a UUID, as list-apps shows), not "${id}"`);
  }
  return id;
}

/**
 * A player of the app named by id or by email (any case); an unknown one fails in one line, and
 * so does an unknown app (told apart from an app without that player).
 */
export async function findPlayerOrFail(c: AdminContext, appId: string, who: string): Promise<ReplyOf<typeof AdminFindPlayer>> {
  const byId = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(who);
  try {
    return await c.bus.request(AdminFindPlayer, byId ? { appId, playerId: who } : { appId, email: who }, adminCall(), { timeoutMs: 5000 });
  } catch (err) {
    if (err instanceof AppError && err.code === 'player_not_found') {
      const { apps } = await c.bus.request(AdminListApps, {}, adminCall(), { timeoutMs: 5000 });
      if (!apps.some((a) => a.appId.toLowerCase() === appId.toLowerCase())) {
        throw new AdminFailure(`No app ${appId}. List the apps with: npm run admin -- list-apps`);
      }
      throw new AdminFailure(`App ${appId} has no player "${who}".`);
    }
    throw err;
  }
}
