/**
 * Recovery and settling. Recovery seconds: from the fault's end (the killed process started
 * again, the server back) until the stack answers 200 again on a probe AND every grant pending at
 * the fault's end has landed (the outboxes hold nothing unpublished from before it, every opening
 * made before it is in the collection and its experience applied, every player made before it
 * has its currency and starter chest). Settling (before the ground truth): nothing unpublished in
 * any outbox, every grants consumer with nothing pending or unacknowledged, every purchase settled.
 */
import { connect } from 'nats';
import type pg from 'pg';
import { grantsStream } from '@ccs/shared';
import type { Actor, Api } from './client.js';
import { sleep } from './infra.js';
import type { Progress } from './progress.js';

const SCHEMAS = ['players', 'wallet', 'chests', 'collections'];

/** True when the readiness route and one read of every service answer 200. */
export async function probe(api: Api, p: Actor): Promise<boolean> {
  const get = async (path: string, token?: string) => {
    try {
      const headers: Record<string, string> = { apikey: api.apiKey, accept: 'application/vnd.api+json' };
      if (token) headers.authorization = `Bearer ${token}`;
      const res = await fetch(api.base + path, { headers, signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      return res.status === 200;
    } catch {
      return false;
    }
  };
  const paths = ['/api/v1/players/me', '/api/v1/currencies', '/api/v1/players/me/chests', '/api/v1/players/me/collection'];
  const ok = await Promise.all([get('/readyz'), ...paths.map((x) => get(x, p.token))]);
  return ok.every(Boolean);
}

/** What of the grants made up to `t` has not landed yet ("" when everything has). */
export async function grantsPendingAt(db: pg.Pool, t: Date): Promise<string> {
  const outbox = SCHEMAS.map((s) => `(SELECT count(*) FROM ${s}.outbox WHERE published_at IS NULL AND created_at <= $1)`).join(' + ');
  const r = await db.query<{ outbox: number; openings: number; players: number }>(
    `SELECT (${outbox})::int AS outbox,
            (SELECT count(*) FROM chests.openings o WHERE o.opened_at <= $1 AND (
                (SELECT count(*) FROM collections.owned_collectibles g WHERE g.opening_id = o.id) < jsonb_array_length(o.items)
                OR NOT EXISTS (SELECT 1 FROM players.processed_messages m WHERE m.message_id = o.id::text AND m.consumer = 'players-experience')))::int AS openings,
            (SELECT count(*) FROM players.players p WHERE p.created_at <= $1 AND (
                NOT EXISTS (SELECT 1 FROM chests.inventory_chests c WHERE c.id = p.starter_chest_id)
                OR NOT EXISTS (SELECT 1 FROM wallet.ledger l WHERE l.player_id = p.id AND l.reason = 'initial_currency')))::int AS players`,
    [t],
  );
  const { outbox: a, openings: b, players: c } = r.rows[0]!;
  const parts = [a && `${a} outbox rows unpublished`, b && `${b} openings not granted`, c && `${c} players without their grants`].filter(Boolean);
  return parts.join(', ');
}

export interface Recovery {
  /** Seconds from the fault's end to the first probe answered 200 everywhere. */
  probeS?: number;
  /** Seconds from the fault's end until the grants pending then had landed. */
  grantsS?: number;
  /** The larger of the two: the recovery. Undefined when it did not recover within the bound. */
  recoveryS?: number;
  waitingFor?: string;
}

/** Measures recovery from `faultEnd` (ms), polling the probe and the database, for at most `timeoutMs`. */
export async function measureRecovery(api: Api, prober: Actor, db: pg.Pool, faultEnd: number, timeoutMs: number): Promise<Recovery> {
  const deadline = faultEnd + timeoutMs;
  const out: Recovery = {};
  const secs = () => Math.round((Date.now() - faultEnd) / 100) / 10;
  const probing = (async () => {
    while (Date.now() < deadline) {
      if (await probe(api, prober)) return void (out.probeS = secs());
      await sleep(100);
    }
  })();
  const granting = (async () => {
    const at = new Date(faultEnd);
    while (Date.now() < deadline) {
      try {
        out.waitingFor = await grantsPendingAt(db, at);
        if (!out.waitingFor) return void (out.grantsS = secs());
      } catch (err) {
        out.waitingFor = `the database (${String(err).slice(0, 80)})`;
      }
      await sleep(150);
    }
  })();
  await Promise.all([probing, granting]);
  if (out.probeS === undefined) out.waitingFor = `a probe answered 200${out.waitingFor ? `; ${out.waitingFor}` : ''}`;
  if (out.probeS !== undefined && out.grantsS !== undefined) out.recoveryS = Math.max(out.probeS, out.grantsS);
  return out;
}

/**
 * Waits until nothing is in flight: outboxes published, every grants consumer with nothing
 * pending or unacknowledged, and the players' purchases settled. Bounded by progress: it gives up
 * only when what is pending stayed the same for `stillMs`, and returns what was still pending
 * then ("" when settled).
 */
export async function settle(
  db: pg.Pool,
  natsUrl: string,
  prefix: string,
  playerIds: string[],
  stillMs: number,
  progress?: Progress,
): Promise<string> {
  let pending = 'not checked yet';
  let changedAt = Date.now();
  while (Date.now() - changedAt < stillMs) {
    try {
      const outbox = SCHEMAS.map((s) => `(SELECT count(*) FROM ${s}.outbox WHERE published_at IS NULL)`).join(' + ');
      const r = await db.query<{ outbox: number; purchases: number }>(
        `SELECT (${outbox})::int AS outbox,
                (SELECT count(*) FROM chests.payments WHERE kind = 'purchase' AND player_id = ANY($1::uuid[]) AND status NOT IN ('completed', 'refunded', 'failed'))::int AS purchases`,
        [playerIds],
      );
      const busy: string[] = [];
      if (r.rows[0]!.outbox) busy.push(`${r.rows[0]!.outbox} outbox rows unpublished`);
      if (r.rows[0]!.purchases) busy.push(`${r.rows[0]!.purchases} purchases unsettled`);
      const nc = await connect({ servers: natsUrl, reconnect: false, timeout: 2000 });
      try {
        const jsm = await nc.jetstreamManager({ timeout: 2000 });
        for await (const c of jsm.consumers.list(grantsStream(prefix))) {
          if (c.num_pending || c.num_ack_pending) busy.push(`${c.name}: ${c.num_pending} pending, ${c.num_ack_pending} unacknowledged`);
        }
      } finally {
        await nc.close();
      }
      const now = busy.join('; ');
      if (!now) return '';
      if (now !== pending) {
        changedAt = Date.now();
        progress?.mark(`settling: ${now}`);
      }
      pending = now;
    } catch (err) {
      pending = `could not check (${String(err).slice(0, 120)})`;
    }
    await sleep(200);
  }
  return pending;
}
