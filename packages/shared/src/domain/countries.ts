import countries from 'i18n-iso-countries';

/**
 * The ISO 3166-1 alpha-2 codes a country may be given as, from i18n-iso-countries (kept up to
 * date with the ISO list; its 250 codes include XK, the user-assigned code the EU, the app stores
 * and CLDR use for Kosovo, so that its players can declare their country). Reserved or retired
 * codes such as UK (use GB), EU or XX are refused.
 */
const ASSIGNED: ReadonlySet<string> = new Set(Object.keys(countries.getAlpha2Codes()));

/** Whether `code` is an assigned alpha-2 country code, in upper case (`BE`, not `be`). */
export function isCountryCode(code: string): boolean {
  return ASSIGNED.has(code);
}

/** A country as a player may type it (`be` or `BE`) in its stored form (`BE`); undefined when it names no country. */
export function normalizeCountry(input: string): string | undefined {
  const code = input.toUpperCase();
  return /^[A-Z]{2}$/.test(code) && ASSIGNED.has(code) ? code : undefined;
}
