import { z } from 'zod';
import { UuidSchema, type ReplyOf, GetFairness, RotateSeed, ListPity, VerifyOpening } from '@ccs/shared';
import { component } from '../openapi/components.js';
import { Count, NoRelationships, ResourceLinks } from './jsonapi.js';
import { selfLinks } from '../routes/v1/resource-links.js';

/**
 * Response schemas of verifiable randomness and pity (docs/fairness.md), with the functions that
 * render them, typed by those schemas.
 */

const FairnessResource = z.object({
  type: z.literal('fairness'),
  id: z.literal('current'),
  attributes: z.object({
    server_seed_hash: z.string().describe('SHA-256 (hex) of the server seed the next openings use: the commitment, published before they happen.'),
    client_seed: z.string().describe("The player's part of the input; the player may set it."),
    nonce: Count.describe('The nonce of the next opening; each opening with this seed pair uses the next one.'),
    algorithm: z.string().describe('`hmac-sha256-48bit-v1`, stated exactly in docs/fairness.md.'),
  }),
  relationships: NoRelationships,
  links: ResourceLinks.describe('`self`: `/api/v1/players/me/fairness`.'),
});

/** The calling player's active seed pair. */
export const FairnessDocument = component('FairnessDocument', "The calling player's active seed pair.", z.object({ data: FairnessResource }));

/** A rotation: the new pair, and the old one revealed. */
export const SeedRotationDocument = component(
  'SeedRotationDocument',
  'The new seed pair, and in `meta.revealed` the previous one, whose openings can now be verified.',
  z.object({
    data: FairnessResource,
    meta: z.object({
      revealed: z.object({
        server_seed: z.string().describe('The previous server seed (64 hex digits): its SHA-256 is the hash published before.'),
        server_seed_hash: z.string(),
        client_seed: z.string(),
        last_nonce: Count.nullable().describe('The nonce of the last opening made with it; null when it made none.'),
      }),
    }),
  }),
);

/** The calling player's pity counters. */
export const PityDocument = component(
  'PityDocument',
  "The calling player's pity counter in each pity group of the catalog.",
  z.object({
    data: z.array(
      z.object({
        type: z.literal('pity'),
        id: z.string().describe('The pity group.'),
        attributes: z.object({
          rarity: z.string(),
          opens_since: Count.describe('Openings since the last one that gave this rarity or better.'),
          hard: z.number().int(),
          guaranteed_within: z.number().int().min(1).describe('Openings until the guaranteed one, counting it.'),
          chest_type_ids: z.array(UuidSchema).describe('Catalog chests that share this counter.'),
        }),
        relationships: NoRelationships,
      }),
    ),
    meta: z.object({ total_count: Count }),
  }),
);

/** One opening recomputed from its revealed seed. */
export const VerificationDocument = component(
  'VerificationDocument',
  "One of the calling player's openings recomputed from its revealed server seed, client seed, nonce, pity counter and published rules.",
  z.object({
    data: z.object({
      type: z.literal('opening_verification'),
      id: UuidSchema.describe('The opening.'),
      attributes: z.object({
        chest_type_id: UuidSchema,
        rules_version: z.number().int(),
        algorithm: z.string(),
        server_seed: z.string(),
        server_seed_hash: z.string(),
        client_seed: z.string(),
        nonce: Count,
        opens_since_before: Count.nullable().describe('The pity counter the opening was made at; null when its chest has no pity.'),
        rules: z.record(z.string(), z.unknown()).describe("The chest's rules of that content version."),
        recomputed: z.array(z.object({ slot: Count, collectible_id: z.string(), rarity: z.string() })),
        matches: z.boolean().describe('Whether the recomputed items are exactly the ones the opening gave.'),
      }),
      relationships: NoRelationships,
      links: ResourceLinks.describe('`self`: `/api/v1/openings/{id}/verification`.'),
    }),
  }),
);

/** What `FairnessDocument` describes, as the gateway renders it. */
export type FairnessDocument = z.output<typeof FairnessDocument>;
/** What `PityDocument` describes, as the gateway renders it. */
export type PityDocument = z.output<typeof PityDocument>;
/** What `SeedRotationDocument` describes, as the gateway renders it. */
export type SeedRotationDocument = z.output<typeof SeedRotationDocument>;
/** What `VerificationDocument` describes, as the gateway renders it. */
export type VerificationDocument = z.output<typeof VerificationDocument>;

type Fairness = ReplyOf<typeof GetFairness>;
type Rotation = ReplyOf<typeof RotateSeed>;

export const fairnessResource = (f: Fairness, base: string): FairnessDocument['data'] => ({
  type: 'fairness',
  id: 'current',
  attributes: { server_seed_hash: f.serverSeedHash, client_seed: f.clientSeed, nonce: f.nonce, algorithm: f.algorithm },
  relationships: {},
  links: selfLinks.fairness(base),
});

export const rotationDocument = (r: Rotation, base: string): SeedRotationDocument => ({
  data: fairnessResource(r.fairness, base),
  meta: {
    revealed: {
      server_seed: r.revealed.serverSeed,
      server_seed_hash: r.revealed.serverSeedHash,
      client_seed: r.revealed.clientSeed,
      last_nonce: r.revealed.lastNonce,
    },
  },
});

/** The caller's pity counters, one resource per pity group. */
export const pityDocument = (r: ReplyOf<typeof ListPity>): PityDocument => ({
  data: r.groups.map((g) => ({
    type: 'pity' as const,
    id: g.group,
    attributes: {
      rarity: g.rarity,
      opens_since: g.opensSince,
      hard: g.hard,
      guaranteed_within: g.guaranteedWithin,
      chest_type_ids: g.chestTypeIds,
    },
    relationships: {},
  })),
  meta: { total_count: r.groups.length },
});

/** An opening's verification: its inputs, the recomputed items and whether they match. */
export const verificationDocument = (v: ReplyOf<typeof VerifyOpening>, base: string): VerificationDocument => ({
  data: {
    type: 'opening_verification',
    id: v.openingId,
    attributes: {
      chest_type_id: v.chestTypeId,
      rules_version: v.rulesVersion,
      algorithm: v.algorithm,
      server_seed: v.serverSeed,
      server_seed_hash: v.serverSeedHash,
      client_seed: v.clientSeed,
      nonce: v.nonce,
      opens_since_before: v.opensSinceBefore,
      rules: v.rules,
      recomputed: v.recomputed.map((it) => ({ slot: it.slot, collectible_id: it.collectibleId, rarity: it.rarity })),
      matches: v.matches,
    },
    relationships: {},
    links: selfLinks.openingVerification(base, v.openingId),
  },
});
