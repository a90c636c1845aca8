import { UuidSchema, type CallContext } from '@ccs/shared';
import { walletErrors } from './errors.js';

/** The app every wallet call is scoped to; a call without a well-formed one is refused. */
export function appOf(ctx: CallContext): string {
  if (!ctx.appId || !UuidSchema.safeParse(ctx.appId).success) throw walletErrors.missingApp();
  return ctx.appId;
}

/** The calling player of a player operation (the gateway sets it from the verified token). */
export function callerOf(ctx: CallContext): string {
  if (!ctx.playerId || !UuidSchema.safeParse(ctx.playerId).success) throw walletErrors.missingPlayer();
  return ctx.playerId;
}
