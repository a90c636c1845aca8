import { AdminRotateKeys, ApiKeyKindSchema, MAX_KEY_GRACE_SECONDS } from '@ccs/shared';
import { adminCall, requiredAppId, UsageError, type AdminContext } from '../output.js';
import { formatDuration, renderTable } from '../table.js';

/** How long old keys keep working after a rotation unless told otherwise. */
export const DEFAULT_GRACE_SECONDS = 24 * 3600;

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `90s`, `30m`, `24h`, `7d` → seconds (at most 30 days). */
export function parseGrace(text: string): number {
  const m = /^(\d+)([smhd])$/.exec(text.trim());
  if (!m) throw new UsageError(`--grace takes a duration such as 30m, 24h or 7d, not "${text}"`);
  const seconds = Number(m[1]) * UNITS[m[2]!]!;
  if (seconds > MAX_KEY_GRACE_SECONDS) throw new UsageError('--grace is at most 30d');
  return seconds;
}

/**
 * `rotate-keys --app <id> [--kind publishable|secret] [--grace <duration> | --now]`: new keys,
 * printed once; the old keys of those kinds keep working for the grace period (24 h by default),
 * or stop at once with --now.
 */
export async function rotateKeysCommand(c: AdminContext, o: { app?: string; kind?: string; grace?: string; now?: boolean }): Promise<number> {
  const appId = requiredAppId(o.app);
  if (o.now && o.grace) throw new UsageError('--now and --grace exclude each other');
  const kind = o.kind === undefined ? undefined : ApiKeyKindSchema.safeParse(o.kind);
  if (kind && !kind.success) throw new UsageError(`--kind is publishable or secret, not "${o.kind}"`);
  const graceSeconds = o.now ? 0 : o.grace ? parseGrace(o.grace) : DEFAULT_GRACE_SECONDS;
  const r = await c.bus.request(AdminRotateKeys, { appId, kinds: kind ? [kind.data] : undefined, graceSeconds }, adminCall());
  if (c.json) {
    c.io.out(JSON.stringify({ ...r, graceSeconds }, null, 2));
    return 0;
  }
  c.io.out(`New keys for app ${appId} (shown once: store them now):`);
  for (const line of renderTable(
    ['kind', 'key'],
    r.keys.map((k) => [k.kind, k.key]),
  ))
    c.io.out(`  ${line}`);
  if (!r.retired.length) c.io.out('The app had no live keys of that kind to retire.');
  else if (graceSeconds === 0) {
    c.io.out(`${r.retired.length} old key(s) revoked now (a gateway may accept one for up to APIKEY_CACHE_TTL_MS more, 30 s by default).`);
  } else {
    const until = r.retired.map((k) => k.revokedAt).sort()[0]!;
    c.io.out(
      `${r.retired.length} old key(s) keep working until ${until} (${formatDuration(graceSeconds)} grace); roll your clients over before then.`,
    );
  }
  return 0;
}
