/**
 * Trade stamina from server time (docs/content.md, "Trading"): `stamina` points at `at`, one more
 * every `regenHours` after it, never above `max`. Pure arithmetic on the stored row and the
 * database's clock: no timer runs anywhere.
 */
export interface StaminaRules {
  max: number;
  regen_hours: number;
}

/** A stored stamina value and the moment it was true. */
export interface StaminaMark {
  stamina: number;
  at: Date;
}

const HOUR_MS = 3_600_000;

/** The stamina now, and the mark that keeps the progress towards the next point. */
export function staminaNow(rules: StaminaRules, mark: StaminaMark, now: Date): { current: number; mark: StaminaMark; nextInMs: number | null } {
  const period = rules.regen_hours * HOUR_MS;
  const elapsed = Math.max(0, now.getTime() - mark.at.getTime());
  const steps = Math.floor(elapsed / period);
  const current = Math.min(rules.max, mark.stamina + steps);
  if (current >= rules.max) return { current: rules.max, mark: { stamina: rules.max, at: now }, nextInMs: null };
  const at = new Date(mark.at.getTime() + steps * period);
  return { current, mark: { stamina: current, at }, nextInMs: at.getTime() + period - now.getTime() };
}

/** Spends one point; undefined (with how long until one is back) when none is left. */
export function spendStamina(rules: StaminaRules, mark: StaminaMark, now: Date): { mark: StaminaMark } | { retryAfterMs: number } {
  const s = staminaNow(rules, mark, now);
  if (s.current === 0) return { retryAfterMs: s.nextInMs ?? 0 };
  // From full, the time to the next point starts now; below full, the progress made is kept.
  return { mark: { stamina: s.current - 1, at: s.mark.at } };
}

/** Gives one point back (an offer that did not complete), never above `max`. */
export function returnStamina(rules: StaminaRules, mark: StaminaMark, now: Date): StaminaMark {
  const s = staminaNow(rules, mark, now);
  return s.current + 1 >= rules.max ? { stamina: rules.max, at: now } : { stamina: s.current + 1, at: s.mark.at };
}
