import { AppError } from '@ccs/shared';

/** 404 for a collection the app does not have (another app's ids included). */
export const collectionNotFound = (id: string) =>
  AppError.notFound('collection_not_found', `No collection "${id.slice(0, 100)}" in this app.`, { parameter: 'id' });

/** 404 for a collectible the app does not have (another app's ids included). */
export const collectibleNotFound = (id: string) =>
  AppError.notFound('collectible_not_found', `No collectible "${id.slice(0, 100)}" in this app.`, { parameter: 'id' });

/** 400 for a filter on a field that cannot be filtered on. */
export const unfilterableField = (field: string, filterable: readonly string[]) =>
  AppError.badRequest('invalid_filter', `Cannot filter on "${field}". Filterable: ${filterable.join(', ')}.`, { parameter: 'filter' });
