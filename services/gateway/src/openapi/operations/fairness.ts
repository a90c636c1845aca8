import { FairnessDocument, PityDocument, SeedRotationDocument, VerificationDocument } from '../../resources/fairness.js';
import type { OperationDoc } from '../route-doc.js';
import { INVALID_ID, NO_STORE_HEADER, uuidParam } from './common.js';

/** Documentation of verifiable randomness (commit-reveal) and pity. */

/** GET /api/v1/players/me/fairness. */
export const getFairness: OperationDoc = {
  operationId: 'getFairness',
  tag: 'Fairness',
  summary: "The calling player's seed pair",
  description:
    'The commitment (`server_seed_hash`) to the server seed the next openings use, the client seed and the next nonce. A pair is committed on first use. ' +
    "Each opening's random numbers are HMAC-SHA256 blocks of the server seed over `client_seed:nonce:block`; see docs/fairness.md.",
  token: 'required',
  responses: [{ status: 200, description: 'The active seed pair.', schema: FairnessDocument, headers: NO_STORE_HEADER }],
};

/** PATCH /api/v1/players/me/fairness. */
export const setClientSeed: OperationDoc = {
  operationId: 'setClientSeed',
  tag: 'Fairness',
  summary: 'Set the client seed',
  description: 'Starts a new seed pair with this client seed and a new server seed; the previous pair is revealed in `meta.revealed`.',
  token: 'required',
  bodyExample: { data: { type: 'fairness', attributes: { client_seed: 'my-lucky-seed' } } },
  responses: [{ status: 200, description: 'The new pair, and the previous one revealed.', schema: SeedRotationDocument, headers: NO_STORE_HEADER }],
  errors: { 422: ['a `client_seed` that is not 1 to 64 letters, digits, dots, dashes or underscores, or another attribute'] },
};

/** POST /api/v1/players/me/fairness/rotate. */
export const rotateSeed: OperationDoc = {
  operationId: 'rotateSeed',
  tag: 'Fairness',
  summary: 'Reveal the server seed and commit a new one',
  description: 'Reveals the current server seed (so its openings can be verified) and commits a new one; the client seed stays. No body is needed.',
  token: 'required',
  responses: [{ status: 200, description: 'The new pair, and the previous one revealed.', schema: SeedRotationDocument, headers: NO_STORE_HEADER }],
};

/** GET /api/v1/players/me/pity. */
export const listPity: OperationDoc = {
  operationId: 'listPity',
  tag: 'Fairness',
  summary: "The calling player's pity counters",
  description:
    'For each pity group of the catalog: openings since the last one that gave its rarity or better, and how many openings remain until the guaranteed one.',
  token: 'required',
  responses: [{ status: 200, description: 'The counters.', schema: PityDocument, headers: NO_STORE_HEADER }],
};

/** GET /api/v1/openings/{id}/verification. */
export const verifyOpening: OperationDoc = {
  operationId: 'verifyOpening',
  tag: 'Fairness',
  summary: 'Verify an opening',
  description:
    "Recomputes one of the calling player's openings from its revealed server seed, client seed, nonce, pity counter and the chest's published rules, and says whether the result matches. " +
    'Available once the seed pair it used has been rotated. `scripts/verify-opening.mjs` does the same computation independently.',
  token: 'required',
  params: { id: uuidParam('An opening of the calling player (`meta.opening_id` of the opening result).') },
  responses: [{ status: 200, description: 'The recomputation.', schema: VerificationDocument, headers: NO_STORE_HEADER }],
  errors: {
    400: [INVALID_ID],
    404: ['no opening of the calling player with this id (`opening_not_found`)'],
    409: [
      'the seed pair of the opening has not been rotated yet (`seed_not_revealed`)',
      'the opening was made before verifiable randomness (`opening_not_verifiable`)',
    ],
  },
};
