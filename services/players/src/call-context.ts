import { AppError, type CallContext } from '@ccs/shared';

/** The calling player of a player operation; the gateway only sends these with a verified token. */
export function requirePlayer(ctx: CallContext): string {
  if (!ctx.playerId) throw AppError.unauthorized('missing_token', 'Send Authorization: Bearer <access token>.');
  return ctx.playerId.toLowerCase();
}
