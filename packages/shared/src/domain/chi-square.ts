/**
 * Pearson's chi-square goodness-of-fit test, for the odds simulator (simulate.ts): the statistic
 * of observed counts against expected ones, and its p-value from the chi-square distribution,
 * P(X >= statistic) = Q(df / 2, statistic / 2), the regularized upper incomplete gamma function.
 * Q is computed as in Numerical Recipes (3rd ed., §6.2): by its series when x < a + 1, by the
 * Lentz continued fraction otherwise, so small p-values keep their precision.
 */

/** The result of one goodness-of-fit test. */
export interface ChiSquareTest {
  /** Sum over the categories of (observed - expected)² / expected. */
  statistic: number;
  /** Degrees of freedom: categories with a non-zero expectation, minus one. */
  df: number;
  /** Probability of a statistic at least this large if the counts follow the expected shares. */
  pValue: number;
}

/**
 * Tests observed counts against expected shares (summing to 1) over the same categories. A
 * category with share 0 adds nothing when nothing was observed in it, and makes p 0 otherwise.
 */
export function chiSquareTest(observed: readonly number[], shares: readonly number[]): ChiSquareTest {
  const n = observed.reduce((s, x) => s + x, 0);
  let statistic = 0;
  let categories = 0;
  let impossible = false;
  observed.forEach((o, i) => {
    const expected = (shares[i] ?? 0) * n;
    if (expected > 0) {
      categories++;
      statistic += (o - expected) ** 2 / expected;
    } else if (o > 0) {
      impossible = true;
    }
  });
  const df = Math.max(0, categories - 1);
  if (impossible) return { statistic: Number.POSITIVE_INFINITY, df, pValue: 0 };
  return { statistic, df, pValue: chiSquarePValue(statistic, df) };
}

/** P(X >= x) for X chi-square distributed with `df` degrees of freedom (1 when df is 0). */
export function chiSquarePValue(x: number, df: number): number {
  if (df <= 0) return 1;
  if (!(x > 0)) return 1;
  return gammaQ(df / 2, x / 2);
}

const EPS = 1e-15;
const TINY = 1e-300;
const MAX_ITERATIONS = 10_000;

/** The regularized upper incomplete gamma function Q(a, x) = Γ(a, x) / Γ(a), for a > 0, x >= 0. */
export function gammaQ(a: number, x: number): number {
  if (!(a > 0) || x < 0 || Number.isNaN(x)) throw new RangeError(`gammaQ needs a > 0 and x >= 0, got a=${a}, x=${x}`);
  if (x === 0) return 1;
  if (x === Number.POSITIVE_INFINITY) return 0;
  return x < a + 1 ? 1 - seriesP(a, x) : continuedFractionQ(a, x);
}

/** P(a, x) = 1 - Q(a, x) by its series: e^-x x^a / Γ(a+1) · Σ x^n / ((a+1)…(a+n)). */
function seriesP(a: number, x: number): number {
  let term = 1 / a;
  let sum = term;
  for (let n = 1; n < MAX_ITERATIONS; n++) {
    term *= x / (a + n);
    sum += term;
    if (Math.abs(term) < Math.abs(sum) * EPS) break;
  }
  return sum * Math.exp(-x + a * Math.log(x) - lnGamma(a));
}

/** Q(a, x) by its continued fraction (modified Lentz), for x >= a + 1. */
function continuedFractionQ(a: number, x: number): number {
  let b = x + 1 - a;
  let c = 1 / TINY;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < MAX_ITERATIONS; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < TINY) d = TINY;
    c = b + an / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < EPS) break;
  }
  return Math.exp(-x + a * Math.log(x) - lnGamma(a)) * h;
}

// Lanczos approximation, g = 7, n = 9 (relative error below 1e-15 for a > 0).
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012,
  9.9843695780195716e-6, 1.5056327351493116e-7,
];

/** ln Γ(z) for z > 0. */
export function lnGamma(z: number): number {
  if (z < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * z)) - lnGamma(1 - z);
  const x = z - 1;
  let sum = LANCZOS[0]!;
  for (let i = 1; i < LANCZOS.length; i++) sum += LANCZOS[i]! / (x + i);
  const t = x + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(sum);
}
