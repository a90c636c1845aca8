/**
 * The App Store purchase: a verified transaction granted once, answered once the wallet applied
 * it (docs/store.md), against the durable floor; and what its signature check alone costs.
 */
import { createAppleTrust, verifyAppleJws } from '../services/store/src/apple/index.js';
import type { ApplePki } from '../test/support/store/apple-pki.js';
import { JSONAPI } from './fixtures.js';
import type { Scenario } from './scenarios.js';

export const storePurchase: Scenario = {
  name: 'store purchase (apple)',
  floor: 'durable',
  async prepare({ api, fx, plan, pki }) {
    // Each request a new App Store transaction (a consumable of 100 gems), signed ahead of the
    // run by the bench's authority, for one of 50 adult players in turn.
    const players = await fx.storeBuyers(50);
    const queue: { body: string; token: string }[] = [];
    let at = 0;
    return {
      load: {
        method: 'POST',
        remaining: () => queue.length - at,
        async topUp(seconds) {
          const units = Math.ceil(plan.maxRate.purchases * seconds);
          for (let i = queue.length - at; i < units; i++) {
            const p = players[queue.length % players.length]!;
            const jws = await pki.signTransaction({ productId: 'com.example.chests.gems_100', appAccountToken: p.id, price: 990, currency: 'USD' });
            queue.push({
              token: p.token,
              body: JSON.stringify({ data: { type: 'store_purchase', attributes: { platform: 'apple', signed_transaction: jws } } }),
            });
          }
        },
        next() {
          const { body, token } = queue[at++]!;
          return { path: '/api/v1/players/me/store/purchases', headers: api.headers(token, JSONAPI), body };
        },
      },
      async describe() {
        return `POST /api/v1/players/me/store/purchases, each request a new App Store transaction (ES256 JWS, x5c of three, the chain cached after the first) granting 100 gems, answered once the wallet applied it; ${at.toLocaleString('en-US')} of ${queue.length.toLocaleString('en-US')} signed over ${players.length} players. ${await verificationCost(pki)}`;
      },
    };
  },
};

/**
 * The CPU of the signature check alone, measured in this process with the store's own code: one
 * verification of a cold chain, then the mean of 2,000 with the chain's links cached (what each
 * request of a running store pays for its JWS).
 */
async function verificationCost(pki: ApplePki): Promise<string> {
  const trust = createAppleTrust({ extraRoots: pki.rootPem });
  const jws = await Promise.all(Array.from({ length: 2001 }, () => pki.signTransaction()));
  const cold = process.cpuUsage();
  await verifyAppleJws(jws[0]!, trust);
  const coldUs = process.cpuUsage(cold);
  const hot = process.cpuUsage();
  for (const j of jws.slice(1)) await verifyAppleJws(j, trust);
  const hotUs = process.cpuUsage(hot);
  const us = (u: NodeJS.CpuUsage) => u.user + u.system;
  return `CPU per verification (this process, the store's verifyAppleJws): ${(us(coldUs) / 1000).toFixed(2)} ms with the chain cold, ${(us(hotUs) / 2000 / 1000).toFixed(3)} ms with its links cached (mean of 2,000)`;
}
