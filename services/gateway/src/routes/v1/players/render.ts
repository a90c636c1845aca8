import type { FriendView, PlayerView, Session } from '@ccs/shared';
import { selfLinks } from '../resource-links.js';
import type { Friend, MePlayer, RegistrationDocument, SessionDocument, SessionPlayer } from '../../../resources/players.js';

/**
 * The player as registration, login and refresh show it (the spec's attributes), with references
 * to the unopened chests: the starter chest on registration and guest creation (what was just
 * granted), else `chests` as the inventory lists them (its first page), or `meta.available: false`
 * when the chests service could not be asked. Its self link is the player's canonical URL.
 */
export function sessionPlayerResource(s: Session, base: string, chests?: { type: 'chest'; id: string }[]): SessionPlayer {
  return {
    type: 'player',
    id: s.player.id,
    attributes: { email: s.player.email, is_anonymous: s.player.isAnonymous },
    relationships: { chests: chestsRelationship(s.grants ? [{ type: 'chest', id: s.grants.starterChestId }] : chests) },
    links: selfLinks.player(base, s.player.id),
  };
}

/** A player's `relationships.chests`: the references, or that they could not be read now. */
function chestsRelationship(chests: { type: 'chest'; id: string }[] | undefined) {
  return chests ? { data: chests.map((c) => ({ type: c.type, id: c.id })) } : { meta: { available: false as const } };
}

/** A session document's meta; registration's (and a guest's creation's) adds what was granted. */
type SessionMeta = SessionDocument['meta'] & Partial<Pick<RegistrationDocument['meta'], 'initial_currency' | 'welcome_bonus'>>;

/** Token meta of a session; registration and guest creation add what was granted. */
export function sessionMeta(s: Session): SessionMeta {
  const meta: SessionMeta = {
    access_token: s.accessToken,
    refresh_token: s.refreshToken,
    token_type: s.tokenType,
    expires_in: s.expiresIn,
    created_at: s.player.createdAt,
    player_type: s.playerType,
  };
  if (s.grants) {
    meta.initial_currency = s.grants.initialCurrency;
    // Amounts by currency code and the starter chest's id: the schema's `catchall` of integers
    // beside one string member, which the generated type writes as an intersection that only
    // Object.assign's own intersection type meets (a spread is checked member by member).
    meta.welcome_bonus = Object.assign({}, s.grants.welcomeBonus, { starter_chest: s.grants.starterChestId });
  }
  return meta;
}

/**
 * The calling player on /players/me, with references to their unopened chests; when the chests
 * could not be read, the relationship carries `meta.available: false` instead of data. Country
 * and birth year are shown here only, to the player themselves (never to friends or others). Its
 * self link is the player's canonical URL, `/players/{id}`, which answers as `/players/me` does.
 */
export function mePlayerResource(p: PlayerView, base: string, chests: { type: 'chest'; id: string }[] | undefined): MePlayer {
  return {
    type: 'player',
    id: p.id,
    attributes: {
      email: p.email,
      is_anonymous: p.isAnonymous,
      privacy: p.privacy,
      experience: p.experience,
      country: p.country,
      birth_year: p.birthYear,
      created_at: p.createdAt,
    },
    relationships: { chests: chestsRelationship(chests) },
    links: selfLinks.player(base, p.id),
  };
}

/**
 * Another player in the caller's friend list; only the relation is shown, never their email. No
 * self link: the player's URL answers that player alone (403 to anyone else).
 */
export function friendResource(f: FriendView): Friend {
  return {
    type: 'player',
    id: f.playerId,
    attributes: { is_anonymous: f.isAnonymous },
    relationships: {},
    meta: { status: f.status, since: f.since },
  };
}
