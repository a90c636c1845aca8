import { z } from 'zod';
import { defineEvent, defineQuery, defineSubject } from './subject.js';
import { UuidSchema } from './context.js';
import { AppContentSchema } from './content.js';

/** Resolves an `apikey` header to its app; the gateway caches the answer briefly. */
export const ResolveApiKey = defineQuery(
  'players.v1.resolve_api_key',
  z.object({ apiKey: z.string().min(1).max(200) }),
  z.object({
    appId: UuidSchema,
    /** `publishable` keys come from game clients; `secret` keys from the studio's servers. */
    keyKind: z.enum(['publishable', 'secret']),
  }),
  { callers: ['gateway'] },
);

/** The public keys that verify access tokens (JWK set), for the gateway. */
export const GetJwks = defineQuery(
  'players.v1.jwks',
  z.object({}),
  z.object({
    issuer: z.string(),
    keys: z.array(z.object({ kid: z.string(), alg: z.literal('ES256'), publicKeyPem: z.string() })).min(1),
  }),
  { callers: ['gateway'] },
);

/** Who may see a player's inventory: everyone (counts only), nobody else, or confirmed friends. */
export const PrivacySchema = z.enum(['public', 'private', 'friends']);
export type Privacy = z.infer<typeof PrivacySchema>;

/** A player as the players service shows it to the player itself. */
export const PlayerViewSchema = z.object({
  id: UuidSchema,
  /** Null for anonymous (guest) players. */
  email: z.string().nullable(),
  isAnonymous: z.boolean(),
  privacy: PrivacySchema,
  experience: z.number().int().min(0),
  /** Self-declared ISO 3166-1 alpha-2 country (upper case); null until given. Only the player sees it. */
  country: z.string().nullable(),
  /** Self-declared birth year; null until given. Only the player sees it. */
  birthYear: z.number().int().nullable(),
  /** ISO 8601 UTC. */
  createdAt: z.string(),
});
export type PlayerView = z.infer<typeof PlayerViewSchema>;

/** Amounts per currency code, as integers (the content's player rules). */
const CurrencyAmountsSchema = z.record(z.string(), z.number().int().min(0));

/** What registration and guest creation grant, and the starter chest's inventory id. */
export const SessionGrantsSchema = z.object({
  initialCurrency: CurrencyAmountsSchema,
  welcomeBonus: CurrencyAmountsSchema,
  /** Inventory id of the starter chest (chosen by players, applied by chests). */
  starterChestId: UuidSchema,
});

/** A signed-in player: tokens and, on registration or guest creation, what was granted. */
export const SessionSchema = z.object({
  player: PlayerViewSchema,
  accessToken: z.string(),
  refreshToken: z.string(),
  tokenType: z.literal('Bearer'),
  /** Access token lifetime in seconds. */
  expiresIn: z.number().int().positive(),
  playerType: z.enum(['registered', 'anonymous']),
  grants: SessionGrantsSchema.optional(),
});
export type Session = z.infer<typeof SessionSchema>;

/**
 * The compliance attributes a player may declare (docs/content.md, "Compliance"), as clients send
 * them: the players service checks them (422 `country_invalid`, `birth_year_invalid`).
 */
const ComplianceAttributes = {
  /** ISO 3166-1 alpha-2, either case; stored upper case. */
  country: z.string().max(100).optional(),
  birthYear: z.number().int().optional(),
};

/**
 * Registers a player in ctx.appId. With ctx.playerId of an anonymous player, upgrades that
 * player instead (same id). The password and email rules are checked here (422 per rule).
 * With `idempotencyKey`, a retry of a registration made with that key (same email, password and
 * caller) answers like the first (`replayed`, fresh tokens); another request with it is a 409.
 */
export const RegisterPlayer = defineSubject(
  'players.v1.register',
  z.object({
    email: z.string().max(10_000),
    password: z.string().max(10_000),
    passwordConfirmation: z.string().max(10_000),
    ...ComplianceAttributes,
    idempotencyKey: z.string().min(1).max(255).optional(),
  }),
  SessionSchema.extend({ replayed: z.boolean().optional() }),
  { callers: ['gateway'] },
);

/** Logs in with email and password (one generic 401 for any mismatch). */
export const LoginPlayer = defineSubject(
  'players.v1.login',
  z.object({ email: z.string().max(10_000), password: z.string().max(10_000) }),
  SessionSchema,
  { callers: ['gateway'] },
);

/** Exchanges a refresh token for a new session; the old token is rotated out. */
export const RefreshSession = defineSubject('players.v1.refresh', z.object({ refreshToken: z.string().max(1000) }), SessionSchema, {
  callers: ['gateway'],
});

/**
 * Revokes ctx.playerId's refresh token families: the one of the access token's session (`sessionId`)
 * and the one of `refreshToken` when given.
 */
export const LogoutPlayer = defineSubject(
  'players.v1.logout',
  z.object({ sessionId: UuidSchema.optional(), refreshToken: z.string().max(1000).optional() }),
  z.object({ revokedFamilies: z.number().int().min(0) }),
  { callers: ['gateway'] },
);

/**
 * Creates an anonymous (guest) player with tokens, initial currency and a starter chest. With
 * `idempotencyKey`, a retry made with that key while the player is still a guest answers like the
 * first (`replayed`: the same guest and grants, fresh tokens).
 */
export const CreateGuest = defineSubject(
  'players.v1.create_guest',
  z.object({ idempotencyKey: z.string().min(1).max(255).optional() }),
  SessionSchema.extend({ replayed: z.boolean().optional() }),
  { callers: ['gateway'] },
);

/** The calling player (ctx.playerId). */
export const GetMe = defineQuery('players.v1.get_me', z.object({}), PlayerViewSchema, { callers: ['gateway'] });

/**
 * Changes the calling player's settings: privacy, country, birth year (those given). A birth year,
 * once set, cannot be changed by the player (409 birth_year_locked; docs/content.md).
 */
export const UpdateMe = defineSubject(
  'players.v1.update_me',
  z.object({ privacy: PrivacySchema.optional(), ...ComplianceAttributes }),
  PlayerViewSchema,
  { callers: ['gateway'] },
);

/** One friendship as seen by the calling player. */
export const FriendViewSchema = z.object({
  playerId: UuidSchema,
  status: z.enum(['confirmed', 'pending_outgoing', 'pending_incoming']),
  isAnonymous: z.boolean(),
  /** When the calling player's side or, if none, the other side was requested (ISO 8601 UTC). */
  since: z.string(),
});
export type FriendView = z.infer<typeof FriendViewSchema>;

/** Sends a friend request to a player of the same app; the reciprocal request confirms it. */
export const AddFriend = defineSubject(
  'players.v1.add_friend',
  z.object({ playerId: UuidSchema }),
  z.object({ friend: FriendViewSchema, created: z.boolean() }),
  { callers: ['gateway'] },
);

/** Lists the calling player's friends and pending requests. */
export const ListFriends = defineQuery('players.v1.list_friends', z.object({}), z.object({ friends: z.array(FriendViewSchema) }), {
  callers: ['gateway'],
});

/** Removes a friendship or a pending request in either direction. */
export const RemoveFriend = defineSubject('players.v1.remove_friend', z.object({ playerId: UuidSchema }), z.object({ removed: z.boolean() }), {
  callers: ['gateway'],
});

/** Operator command: creates an app with its content (default content when none is given). */
export const AdminCreateApp = defineSubject(
  'players.v1.admin_create_app',
  z.object({
    name: z.string().min(1).max(100),
    /** A content file readable by the players service. */
    contentPath: z.string().min(1).max(1000).optional(),
    content: AppContentSchema.optional(),
  }),
  z.object({
    appId: UuidSchema,
    publishableKey: z.string(),
    secretKey: z.string(),
    contentVersion: z.number().int().min(1),
    /**
     * Which content the app got: the request's (`content`), the file it named (`contentPath`), or
     * the default content the players service read (its path), with player credit off.
     */
    loaded: z.object({ from: z.enum(['request', 'file', 'default']), path: z.string().optional() }).optional(),
  }),
  { callers: ['admin'] },
);

/** Operator command: loads a new content version into an app and announces it to every service. */
export const AdminLoadContent = defineSubject(
  'players.v1.admin_load_content',
  z.object({ appId: UuidSchema, content: AppContentSchema }),
  z.object({ version: z.number().int().min(1) }),
  { callers: ['gateway', 'admin'] },
);

/**
 * Core NATS notification (not durable) that an app's API keys changed: gateways drop their cached
 * answers for that app at once instead of waiting for APIKEY_CACHE_TTL_MS.
 */
export const ApiKeysChanged = defineEvent('events.apps.keys_changed', z.object({ appId: UuidSchema }), {
  publishers: ['players'],
  listeners: ['gateway'],
});

/**
 * Core NATS notification (not durable) that a service committed a new content version of an app:
 * chests and collections publish it right after applying one (their content consumers). Gateways
 * drop the replies they cached for that app (REPLY_CACHE_TTL_MS), and the other replicas of the
 * publishing service move their version pointer to it at once. A lost notice costs at most those
 * caches' lifetimes.
 */
export const ContentChanged = defineEvent(
  'events.apps.content_changed',
  z.object({ appId: UuidSchema, version: z.number().int().min(1), service: z.enum(['chests', 'collections']) }),
  { publishers: ['chests', 'collections'], listeners: ['chests', 'collections', 'gateway'] },
);
