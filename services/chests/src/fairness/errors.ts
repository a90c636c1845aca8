import { AppError } from '@ccs/shared';

/** Errors of the fairness, pity and verification operations. */
export const fairnessErrors = {
  rulesVersionNotFound: () =>
    AppError.notFound('rules_version_not_found', 'This chest has no rules of that content version.', { parameter: 'rules_version' }),
  openingNotFound: () => AppError.notFound('opening_not_found', 'You have no opening with this id.', { parameter: 'id' }),
  seedNotRevealed: () =>
    AppError.conflict(
      'seed_not_revealed',
      'The server seed of this opening is still in use; rotate it (POST /api/v1/players/me/fairness/rotate) to reveal it, then verify.',
    ),
  notVerifiable: () => AppError.conflict('opening_not_verifiable', 'This opening was made before verifiable randomness and cannot be recomputed.'),
};
