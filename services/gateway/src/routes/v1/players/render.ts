import { resource, type FriendView, type PlayerView, type Resource, type Session } from '@ccs/shared';

/** The player as registration, login and refresh show it (the spec's attributes). */
export function sessionPlayerResource(s: Session): Resource {
  // The starter chest is known only at creation; later the chests service owns the inventory.
  const chests = s.grants ? [{ type: 'chest', id: s.grants.starterChestId }] : [];
  return resource('player', s.player.id, { email: s.player.email, is_anonymous: s.player.isAnonymous }, { chests: { data: chests } });
}

/** Token meta of a session; registration and guest creation add what was granted. */
export function sessionMeta(s: Session): Record<string, unknown> {
  const meta: Record<string, unknown> = {
    access_token: s.accessToken,
    refresh_token: s.refreshToken,
    token_type: s.tokenType,
    expires_in: s.expiresIn,
    created_at: s.player.createdAt,
    player_type: s.playerType,
  };
  if (s.grants) {
    meta.initial_currency = s.grants.initialCurrency;
    meta.welcome_bonus = { ...s.grants.welcomeBonus, starter_chest: s.grants.starterChestId };
  }
  return meta;
}

/**
 * The calling player on /players/me, with references to their unopened chests; when the chests
 * could not be read, the relationship carries `meta.available: false` instead of data. Country
 * and birth year are shown here only, to the player themselves (never to friends or others).
 */
export function mePlayerResource(p: PlayerView, chests: Pick<Resource, 'type' | 'id'>[] | undefined): Resource {
  const relationship = chests ? { data: chests.map((c) => ({ type: c.type, id: c.id })) } : { meta: { available: false } };
  return resource(
    'player',
    p.id,
    {
      email: p.email,
      is_anonymous: p.isAnonymous,
      privacy: p.privacy,
      experience: p.experience,
      country: p.country,
      birth_year: p.birthYear,
      created_at: p.createdAt,
    },
    { chests: relationship },
  );
}

/** Another player in the caller's friend list; only the relation is shown, never their email. */
export function friendResource(f: FriendView): Resource {
  return resource('player', f.playerId, { is_anonymous: f.isAnonymous }, {}, { status: f.status, since: f.since });
}
