import {
  consumer,
  DURABLE,
  OpeningGranted,
  withTransaction,
  type ConvertedSlot,
  type Delivery,
  type Logger,
  type OutboxMessage,
  type OutboxRelay,
  type Pool,
  type PoolClient,
} from '@ccs/shared';
import type { z } from 'zod';
import { settleCompletions, touchedBy } from '../completion/rewards.js';
import { conversionCredit } from '../duplicates/credit.js';
import { holdingKey, judge } from '../duplicates/judge.js';
import { DuplicateRulesBook } from '../duplicates/rules-book.js';
import { lockHoldings, readHoldings } from '../repositories/duplicates-repo.js';
import { candidateKey, insertGrantedItemsBatch, type Grant, type GrantMessage } from '../repositories/ownership-repo.js';

/** Durable name the chests service waits on (it asks to be notified when this consumer applied a grant). */
export const OPENINGS_CONSUMER = DURABLE.collectionsOpenings;

type Granted = z.infer<typeof OpeningGranted.payload>;
type Rules = Awaited<ReturnType<DuplicateRulesBook['rulesFor']>>[number];

/**
 * Points where a test makes the process stop mid-saga, to prove the recovery (see
 * test/duplicates/crash.test.ts). Production builds the service without any.
 */
export interface CollectionsFaults {
  /** After a batch's grants (and their conversion credits) committed, before the credits are published and the grants acked. */
  afterGrantCommit?(credits: number): void;
}

/** What the consumer needs besides the message: its pool, the relay of its outbox, and the test seams. */
export interface OpeningsConsumerDeps {
  pool: Pool;
  relay: OutboxRelay;
  log: Logger;
  faults?: CollectionsFaults;
}

/** What a batch did: the openings it added, what each converted, the credits it wrote, and its completion candidates. */
interface Applied {
  applied: Set<string>;
  candidates: Set<string>;
  converted: Map<string, ConvertedSlot[]>;
  credits: OutboxMessage[];
}

const lower = (s: string) => s.toLowerCase();
const bySlot = (g: ItemsGrant) => [...g.items].sort((a, b) => a.slot - b.slot);
const toGrant = (g: ItemsGrant): Grant => ({ openingId: g.openingId, appId: g.appId, playerId: g.playerId, openedAt: g.openedAt, items: bySlot(g) });

/**
 * Adds the items of chest openings to the players' collections (itemsApplier), every grant pulled
 * meanwhile together. Each delivery's applied notice carries the opening's converted slots, for
 * the chests service's answer.
 */
export function openingGrantedConsumer(deps: OpeningsConsumerDeps) {
  const apply = itemsApplier(deps);
  return consumer({
    durable: OPENINGS_CONSUMER,
    event: OpeningGranted,
    processedId: (grant) => grant.openingId,
    // A grant may arrive before its content version (retried until it has): room for minutes, not seconds.
    maxDeliver: 16,
    applyIdempotent: (_db, batch) => apply(batch),
  });
}

/**
 * The items a grant adds, keyed by its id and slot: an opening's items, or a spark exchange's one
 * collectible (slot 0 under the exchange id, spark-granted.ts).
 */
export type ItemsGrant = Pick<Granted, 'openingId' | 'appId' | 'playerId' | 'openedAt' | 'rulesVersion' | 'items'>;

/**
 * Adds the items of a batch of grants to the players' collections, idempotent by the items' own
 * key (grant id, slot): a second delivery, or the same grant re-published under another message
 * id, adds nothing. The items keep the grant's time as their acquisition time. Returns the grant
 * ids that added items; sets each delivery's applied notice to its converted slots.
 *
 * Duplicates (docs/content.md): each grant is judged by the duplicate rules of the content version
 * it was made with. When no grant of the batch has rules, the batch is the one statement it always
 * was. Otherwise, in one transaction: lock the (player, collectible) holdings it touches, read the
 * copies held, judge the items in order (an item past max_copies is converted instead of kept,
 * also against earlier items of the batch), then one statement inserts the items with their
 * verdicts, adds the kept ones to the tallies and writes the conversions' wallet credit to the
 * outbox. Concurrent batches of one player (other replicas, the other grants' consumer) wait on
 * the locks, so none keeps a copy another one already took. Completions and their rewards follow.
 */
export function itemsApplier(deps: OpeningsConsumerDeps): (batch: Delivery<ItemsGrant>[]) => Promise<Set<string>> {
  const book = new DuplicateRulesBook();
  return async (batch) => {
    for (const { payload } of batch) {
      // Not retryable into success: the runtime tries the batch's grants one by one, then parks this one.
      if (Number.isNaN(Date.parse(payload.openedAt))) throw new Error(`grant ${payload.openingId} has an invalid time`);
    }
    const firsts = [...new Map(batch.map((d) => [lower(d.payload.openingId), d])).values()];
    const rules = await book.rulesFor(
      deps.pool,
      firsts.map((d) => ({ appId: d.payload.appId, rulesVersion: d.payload.rulesVersion })),
    );
    const done: Applied = rules.every((r) => r === null)
      ? {
          ...(await insertGrantedItemsBatch(
            deps.pool,
            firsts.map((d) => toGrant(d.payload)),
          )),
          converted: new Map(),
          credits: [],
        }
      : await withTransaction(deps.pool, (tx) => applyJudged(tx, firsts, rules));
    if (done.credits.length) deps.faults?.afterGrantCommit?.(done.credits.length);
    // Collections completed by these grants, their rewards written with the completion: the
    // candidates the write found, and every collection of a grant it did not apply (re-delivered:
    // a crash may have come between the grants' commit and this step). No candidate, no step.
    const check = (openingId: string, appId: string, playerId: string, collectionId: string) =>
      !done.applied.has(lower(openingId)) || done.candidates.has(candidateKey(appId, playerId, collectionId));
    const rewards = await settleCompletions(deps.pool, touchedBy(firsts, check));
    const messages = [...done.credits, ...rewards.messages];
    // Published from memory at once; the relay publishes what this misses (a crash, NATS away).
    if (messages.length) {
      deps.relay
        .publishNow(messages)
        .catch((err) =>
          deps.log.warn({ err: String(err), messages: messages.length }, 'credits and rewards not published yet; the relay will retry'),
        );
    }
    for (const d of batch) d.notice = { converted: done.converted.get(lower(d.payload.openingId)) ?? [] };
    return new Set(batch.filter((d) => done.applied.has(lower(d.payload.openingId))).map((d) => d.payload.openingId));
  };
}

/** The transaction of a batch with duplicate rules: lock, read, judge, write (see itemsApplier). */
async function applyJudged(tx: PoolClient, firsts: Delivery<ItemsGrant>[], rules: Rules[]): Promise<Applied> {
  const holdings = firsts.flatMap(({ payload: g }) =>
    g.items.map((it) => ({ appId: lower(g.appId), playerId: lower(g.playerId), collectibleId: it.collectibleId })),
  );
  await lockHoldings(tx, holdings);
  const { held, stored } = await readHoldings(
    tx,
    holdings,
    firsts.map((d) => d.payload.openingId),
  );
  // A grant already stored (re-delivered) is answered with what it converted then, and not judged again.
  const converted = new Map(stored);
  const fresh = firsts.map((d, i) => ({ d, rules: rules[i]! })).filter(({ d }) => !stored.has(lower(d.payload.openingId)));
  const grants = fresh.map(({ d }) => toGrant(d.payload));
  const verdicts = judge(
    fresh.flatMap(({ d, rules: r }, i) =>
      grants[i]!.items.map((it) => ({ key: holdingKey(d.payload.appId, d.payload.playerId, it.collectibleId), rarity: it.rarity, rules: r })),
    ),
    held,
  );
  let at = 0;
  const messages: GrantMessage[] = [];
  grants.forEach((g, i) => {
    g.items = g.items.map((it) => ({ ...it, converted: verdicts[at++] }));
    const slots = g.items.flatMap((it) => (it.converted ? [{ slot: it.slot, ...it.converted }] : []));
    converted.set(lower(g.openingId), slots);
    const credit = conversionCredit(g, slots, fresh[i]!.d.ctx);
    if (credit) messages.push({ openingId: g.openingId, message: credit });
  });
  const { applied, written, candidates } = await insertGrantedItemsBatch(tx, grants, messages);
  return { applied, candidates, converted, credits: messages.map((m) => m.message).filter((m) => written.has(m.id)) };
}
