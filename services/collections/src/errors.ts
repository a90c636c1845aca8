import { AppError, type CallContext } from '@ccs/shared';

/** The app of a call; every collections subject is tenant-scoped. */
export function appOf(ctx: CallContext): string {
  if (!ctx.appId) throw AppError.badRequest('missing_app', 'This call must name an app.');
  return ctx.appId;
}

/** The calling player, for the subjects that only make sense for one. */
export function playerOf(ctx: CallContext): string {
  if (!ctx.playerId) throw AppError.unauthorized('missing_token', 'Send Authorization: Bearer <access token>.');
  return ctx.playerId;
}

/** 404 for a collection the app does not have (another app's ids included). */
export const collectionNotFound = (id: string) =>
  AppError.notFound('collection_not_found', `No collection "${id.slice(0, 100)}" in this app.`, { parameter: 'id' });

/** 404 for a collectible the app does not have (another app's ids included). */
export const collectibleNotFound = (id: string) =>
  AppError.notFound('collectible_not_found', `No collectible "${id.slice(0, 100)}" in this app.`, { parameter: 'id' });
