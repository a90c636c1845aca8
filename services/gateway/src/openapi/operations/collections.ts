import { z } from 'zod';
import {
  CollectibleDocument,
  CollectibleListDocument,
  CollectionCollectiblesDocument,
  CollectionDocument,
  CollectionListDocument,
  PlayerCollectionDocument,
} from '../../resources/collections.js';
import type { OperationDoc, ParamDoc } from '../route-doc.js';
import { PRIVATE_WITH_TOKEN_HEADER } from './common.js';

/** Documentation of collections, collectibles and the calling player's collection. */

const contentId = (what: string, example: string): Record<string, ParamDoc> => ({
  id: { schema: z.string().min(1), description: `${what} (a slug-like id, not a UUID).`, example },
});

const TOO_MANY = 'a `sort` or `filter` with more keys or values than the service takes (`invalid_parameter`)';

/** GET /api/v1/collections. */
export const listCollections: OperationDoc = {
  operationId: 'listCollections',
  tag: 'Collections',
  summary: "The app's collections",
  description: 'A page of collections; with a token, each with `meta.completed_at` (when the caller completed it, null until then).',
  token: 'optional',
  responses: [{ status: 200, description: 'A page of collections.', schema: CollectionListDocument, headers: PRIVATE_WITH_TOKEN_HEADER }],
  errors: { 400: [TOO_MANY] },
};

/** GET /api/v1/collections/{id}. */
export const getCollection: OperationDoc = {
  operationId: 'getCollection',
  tag: 'Collections',
  summary: 'One collection',
  description: 'A collection with the ids of its collectibles (`include=collectibles` adds them) and, with a token, how much of it the caller owns.',
  token: 'optional',
  params: contentId('The collection', 'sea-creatures'),
  responses: [{ status: 200, description: 'The collection.', schema: CollectionDocument, headers: PRIVATE_WITH_TOKEN_HEADER }],
  errors: { 404: ['no such collection in this app (`collection_not_found`)'] },
};

/** GET /api/v1/collections/{id}/collectibles. */
export const listCollectionCollectibles: OperationDoc = {
  operationId: 'listCollectionCollectibles',
  tag: 'Collections',
  summary: "A collection's collectibles",
  token: 'optional',
  params: contentId('The collection', 'sea-creatures'),
  responses: [
    {
      status: 200,
      description: "A page of the collection's collectibles.",
      schema: CollectionCollectiblesDocument,
      headers: PRIVATE_WITH_TOKEN_HEADER,
    },
  ],
  errors: { 400: [TOO_MANY], 404: ['no such collection in this app (`collection_not_found`)'] },
};

/** GET /api/v1/collectibles. */
export const listCollectibles: OperationDoc = {
  operationId: 'listCollectibles',
  tag: 'Collectibles',
  summary: "The app's collectibles",
  description: "Filter with `filter[collection_id]` and `filter[rarity]`; sort by `rarity` orders by the rarity's rank.",
  token: 'optional',
  responses: [{ status: 200, description: 'A page of collectibles.', schema: CollectibleListDocument }],
  errors: { 400: [TOO_MANY] },
};

/** GET /api/v1/collectibles/{id}. */
export const getCollectible: OperationDoc = {
  operationId: 'getCollectible',
  tag: 'Collectibles',
  summary: 'One collectible',
  description:
    'A collectible with its rarity info; `include=collection` adds its collection. With a token, `meta` also says whether the caller owns it, since when, how many copies, and their progress in its collection.',
  token: 'optional',
  params: contentId('The collectible', 'sea-clownfish'),
  responses: [{ status: 200, description: 'The collectible.', schema: CollectibleDocument, headers: PRIVATE_WITH_TOKEN_HEADER }],
  errors: { 404: ['no such collectible in this app (`collectible_not_found`)'] },
};

/** GET /api/v1/players/me/collection. */
export const getPlayerCollection: OperationDoc = {
  operationId: 'getPlayerCollection',
  tag: 'Collections',
  summary: "The calling player's collection",
  description:
    'The collectibles the calling player owns, most recent acquisition first, each with its copies; `meta.collections` has the completeness of every collection of the app.',
  token: 'required',
  responses: [
    {
      status: 200,
      description: 'A page of the collection.',
      schema: PlayerCollectionDocument,
      headers: { 'cache-control': { description: '`private, no-store`.', schema: z.string() } },
    },
  ],
};
