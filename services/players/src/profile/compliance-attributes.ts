import { normalizeCountry, type ErrorObject } from '@ccs/shared';
import type { ComplianceAttributes } from '../repositories/players-repo.js';

/** Earliest birth year accepted: anything before is a typo, not a player. */
export const MIN_BIRTH_YEAR = 1900;

/** The compliance attributes as the contracts carry them (registration, PATCH /players/me). */
interface Input {
  country?: string;
  birthYear?: number;
}

const invalid = (member: 'country' | 'birth_year', detail: string): ErrorObject => ({
  kind: 'invalid',
  code: `${member}_invalid`,
  detail,
  source: { pointer: `/data/attributes/${member}` },
});

/**
 * Checks the country and birth year a player declares (docs/content.md, "Compliance"): the country
 * must be an assigned ISO 3166-1 alpha-2 code, in either case (`be` is stored as `BE`); the birth
 * year a year from 1900 to the current one (UTC). Returns them normalised, or one 422 per bad member.
 */
export function checkComplianceAttributes(input: Input, now: Date = new Date()): { attributes: ComplianceAttributes; errors: ErrorObject[] } {
  const errors: ErrorObject[] = [];
  const attributes: ComplianceAttributes = {};
  if (input.country !== undefined) {
    const country = normalizeCountry(input.country);
    if (country) attributes.country = country;
    else errors.push(invalid('country', 'Country must be the ISO 3166-1 alpha-2 code of a country, such as DE or GB (not UK).'));
  }
  if (input.birthYear !== undefined) {
    const thisYear = now.getUTCFullYear();
    if (input.birthYear >= MIN_BIRTH_YEAR && input.birthYear <= thisYear) attributes.birthYear = input.birthYear;
    else errors.push(invalid('birth_year', `Birth year must be a year from ${MIN_BIRTH_YEAR} to ${thisYear}.`));
  }
  return { attributes, errors };
}
