import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { ComplianceProfileChanged, ContentChanged, type Bus } from '@ccs/shared';
import { RestrictionsMemo } from '../lib/restrictions-memo.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Each player's purchase restrictions for the catalog's flags, briefly (lib/restrictions-memo.ts). */
    purchaseFlags: RestrictionsMemo;
  }
}

/**
 * The memory of purchase restrictions behind the catalog's per-player flags
 * (lib/restrictions-memo.ts, PURCHASE_FLAGS_TTL_MS). Every gateway listens (a plain subscription,
 * so each replica hears every notice) to players' ComplianceProfileChanged, to forget that player,
 * and to chests' ContentChanged, after which answers judged by older content are not used.
 *
 * Read-your-writes: players publishes a profile change and waits for the NATS server to take it
 * before it answers, and the server queues it to each gateway's connection then. The gateway that
 * takes the change hears it before the answer (same connection, in order). Another replica may
 * not have read it yet when the player's next request arrives, so a read that finds a kept answer
 * first waits for `bus.heardAll()` (routes/v1/purchasable.ts). A notice lost for good (core NATS
 * is at most once) leaves an answer for at most PURCHASE_FLAGS_TTL_MS.
 */
export default fp(
  async function purchaseFlags(app: FastifyInstance, opts: { bus: Bus; ttlMs: number }) {
    const memo = new RestrictionsMemo(opts.ttlMs);
    app.decorate('purchaseFlags', memo);
    if (!memo.enabled) return;
    const stops = [
      opts.bus.listen(ComplianceProfileChanged, ({ appId, playerId }) => memo.forget(appId, playerId)),
      opts.bus.listen(ContentChanged, ({ appId, version, service }) => {
        if (service === 'chests') memo.contentChanged(appId, version);
      }),
    ];
    app.addHook('onClose', async () => stops.forEach((stop) => stop()));
  },
  { name: 'purchase-flags' },
);
