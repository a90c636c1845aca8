import { endpoint, ListCurrencies, type Pool } from '@ccs/shared';
import { appOf, callerOf } from '../call-context.js';
import { listCurrencies } from '../repositories/currencies-repo.js';

/** wallet.v1.list_currencies: the app's currencies, with the calling player's balances if any. */
export function listCurrenciesEndpoint(pool: Pool) {
  return endpoint(ListCurrencies, async (_req, ctx) => {
    const rows = await listCurrencies(pool, appOf(ctx), ctx.playerId === undefined ? undefined : callerOf(ctx));
    return {
      currencies: rows.map((r) => ({ id: r.id, code: r.code, name: r.name, ...(r.balance === null ? {} : { balance: r.balance }) })),
    };
  });
}
