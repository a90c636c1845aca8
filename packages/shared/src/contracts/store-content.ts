import { z } from 'zod';

/**
 * The `store` section of an app's content (docs/store.md): the products players buy with real
 * money in the App Store and Google Play, what each grants, the app's identity in each store, and
 * what a refund takes back. The store service verifies purchases against it.
 */

const Slug = z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'lower-case letters, digits and dashes');

/** App Store Connect product ids: letters, digits, periods, underscores and dashes. */
const AppleProductId = z.string().regex(/^[A-Za-z0-9._-]{1,255}$/, 'letters, digits, periods, underscores and dashes');
/** Google Play product ids: lower-case letters, digits, underscores and periods, starting with a letter or digit. */
const GoogleProductId = z.string().regex(/^[a-z0-9][a-z0-9._]{0,148}$/, 'lower-case letters, digits, underscores and periods');

/** What one unit of a product grants: currency amounts (whole units) and/or chests by chest type. */
export const StoreGrantsSchema = z
  .object({
    currencies: z.record(z.string(), z.number().int().min(1).max(1_000_000_000)).optional(),
    chests: z
      .array(z.object({ chest: Slug, quantity: z.number().int().min(1).max(100) }).strict())
      .max(20)
      .optional(),
  })
  .strict();
export type StoreGrants = z.infer<typeof StoreGrantsSchema>;

export const StoreProductSchema = z
  .object({
    /** The product's id in our API (a slug); `unknown_product` names the store's id, never this. */
    id: Slug,
    name: z.string().min(1).max(128),
    apple_product_id: AppleProductId.optional(),
    google_product_id: GoogleProductId.optional(),
    grants: StoreGrantsSchema,
  })
  .strict();
export type StoreProduct = z.infer<typeof StoreProductSchema>;

export const StoreContentSchema = z
  .object({
    products: z.array(StoreProductSchema).max(500).default([]),
    /** The app in the App Store: signed transactions and notifications must name this bundle and environment. */
    apple: z
      .object({
        bundle_id: z.string().regex(/^[A-Za-z0-9.-]{1,155}$/, 'a bundle id such as com.studio.game'),
        environment: z.enum(['Production', 'Sandbox']),
      })
      .strict()
      .optional(),
    /** The app in Google Play, and who may push its real-time developer notifications (Pub/Sub push with an OIDC token). */
    google: z
      .object({
        package_name: z.string().regex(/^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$/, 'a package name such as com.studio.game'),
        notifications: z
          .object({
            /** The audience the push subscription puts in its token (the subscription's setting). */
            audience: z.string().min(1).max(500),
            /** The service account the push subscription authenticates as. */
            service_account_email: z.string().email().max(320),
          })
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
    /**
     * What a refund takes back. `revoke_then_debt` (the default): the unopened chests the purchase
     * granted are removed, then its currencies are debited, below zero if spent (a debt).
     * `debt`: chests stay; the currencies are debited, below zero if spent.
     */
    refunds: z
      .object({ policy: z.enum(['debt', 'revoke_then_debt']) })
      .strict()
      .default({ policy: 'revoke_then_debt' }),
  })
  .strict();
export type StoreContent = z.infer<typeof StoreContentSchema>;

/** A problem at `path` of the content (content-references.ts's issue reporter). */
type Issue = (path: (string | number)[], message: string) => void;

/**
 * The store section's references: unique product ids and store ids, a store id only where that
 * store is configured, and grants of known currencies and chests, at least one each.
 */
export function checkStore(
  store: StoreContent | undefined,
  known: { currencies: Set<string>; chests: Set<string>; maxCredit: Map<string, number> },
  issue: Issue,
): void {
  if (!store) return;
  const ids = new Set<string>();
  const apple = new Map<string, string>();
  const google = new Map<string, string>();
  store.products.forEach((p, i) => {
    const at = (...path: (string | number)[]) => ['store', 'products', i, ...path];
    if (ids.has(p.id)) issue(at('id'), `duplicate product ${p.id}`);
    ids.add(p.id);
    for (const [key, seen, section] of [
      ['apple_product_id', apple, store.apple],
      ['google_product_id', google, store.google],
    ] as const) {
      const storeId = p[key];
      if (storeId === undefined) continue;
      const first = seen.get(storeId);
      if (first !== undefined) issue(at(key), `${key} ${storeId} is used by products ${first} and ${p.id}: each store id grants one product`);
      seen.set(storeId, p.id);
      if (!section) issue(at(key), `${key} needs store.${key === 'apple_product_id' ? 'apple' : 'google'} (the app's identity in that store)`);
    }
    checkGrants(p, known, (path, message) => issue(at('grants', ...path), message));
  });
}

/** One product's grants: something, of known currencies within their max_credit, and known chests. */
function checkGrants(p: StoreProduct, known: Parameters<typeof checkStore>[1], issue: Issue): void {
  const currencies = Object.entries(p.grants.currencies ?? {});
  const chests = p.grants.chests ?? [];
  if (currencies.length === 0 && chests.length === 0) issue([], `product ${p.id} grants nothing: give it currencies, chests or both`);
  for (const [code, amount] of currencies) {
    if (!known.currencies.has(code)) issue(['currencies', code], `unknown currency ${code}`);
    else if (amount > (known.maxCredit.get(code) ?? Number.POSITIVE_INFINITY))
      issue(['currencies', code], `${amount} exceeds the max_credit ${known.maxCredit.get(code)} of ${code}`);
  }
  chests.forEach((c, j) => {
    if (!known.chests.has(c.chest)) issue(['chests', j, 'chest'], `unknown chest ${c.chest}`);
  });
}
