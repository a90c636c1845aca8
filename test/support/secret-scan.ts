/**
 * Tells a shipped placeholder ("CHANGE_ME", "dev-only-password") from something that looks like a
 * real credential, for tests that guard the manifests and examples we publish.
 */

/** Words that mark a value as a visible placeholder or a throwaway dev value. */
const PLACEHOLDER = /change_?me|dev[-_]only|_dev_|example/i;

/** Shannon entropy in bits per character. */
function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  return [...counts.values()].reduce((sum, n) => sum - (n / s.length) * Math.log2(n / s.length), 0);
}

/**
 * Why a value looks like a real secret (undefined when it does not): a PEM block, a long
 * random-looking token, or any non-empty value without a placeholder marker.
 */
export function looksLikeRealSecret(value: string): string | undefined {
  if (value === '') return undefined;
  if (value.includes('-----BEGIN')) return 'a PEM block';
  for (const token of value.split(/[^A-Za-z0-9+/=_-]+/)) {
    if (token.length >= 20 && !PLACEHOLDER.test(token) && /[A-Za-z]/.test(token) && /\d/.test(token) && entropy(token) > 3.5) {
      return `a random-looking token (${token.length} characters)`;
    }
  }
  return PLACEHOLDER.test(value) ? undefined : 'no placeholder marker (CHANGE_ME, dev-only, example)';
}
