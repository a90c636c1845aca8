import { appOf, endpoint, ListCurrencies, optionalCallerOf, type Pool } from '@ccs/shared';
import { listCurrencies } from '../repositories/currencies-repo.js';

/** wallet.v1.list_currencies: the app's currencies, with the calling player's balances (and debts) if any. */
export function listCurrenciesEndpoint(pool: Pool) {
  return endpoint(ListCurrencies, async (_req, ctx) => {
    const rows = await listCurrencies(pool, appOf(ctx), optionalCallerOf(ctx));
    return {
      currencies: rows.map((r) => ({
        id: r.id,
        code: r.code,
        name: r.name,
        ...(r.balance === null ? {} : { balance: r.balance }),
        ...(r.debt === null ? {} : { debt: r.debt }),
      })),
    };
  });
}
