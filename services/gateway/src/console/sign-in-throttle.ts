import { isIPv6 } from 'node:net';
import type { Redis } from 'ioredis';

/**
 * Failed console sign-ins counted per client address, in one-minute windows kept in Redis (so the
 * count holds across gateway replicas). Once an address has failed `perMinute` times in its
 * window, every sign-in from it waits for the window's end, a right key too; successes are not
 * counted and reset nothing (a studio's own valid key must not clear a guesser's count).
 */
export class SignInThrottle {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly perMinute: number,
  ) {}

  /** The seconds an address must wait before signing in again, or undefined when it may try now. */
  async wait(address: string): Promise<number | undefined> {
    const key = this.keyOf(address);
    let answers: [Error | null, unknown][] | null;
    try {
      answers = await this.redis.multi().get(key).pttl(key).exec();
    } catch {
      // Redis unreachable: not throttled, as the API's own rate limits (skipOnError).
      return undefined;
    }
    const count = Number(answers?.[0]?.[1] ?? 0);
    const left = Number(answers?.[1]?.[1] ?? -2);
    if (count < this.perMinute) return undefined;
    return Math.max(1, Math.ceil((left > 0 ? left : WINDOW_MS) / 1000));
  }

  /** Counts one failed sign-in of the address (the first of a window starts its minute). */
  async failed(address: string): Promise<void> {
    await this.redis.eval(COUNT, 1, this.keyOf(address), String(WINDOW_MS)).catch(() => undefined);
  }

  private keyOf(address: string): string {
    return `${this.prefix}console-signin:${addressKey(address)}`;
  }
}

const WINDOW_MS = 60_000;
const COUNT = "local n = redis.call('incr', KEYS[1]) if n == 1 then redis.call('pexpire', KEYS[1], ARGV[1]) end return n";

/**
 * What one client is, for counting: an IPv4 address as it is (also when written IPv4-mapped,
 * `::ffff:192.0.2.1`), an IPv6 address by its /64 (what one subscriber is usually given, so that
 * walking through its addresses does not escape the count).
 */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.split('%')[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = address.includes('::') && tail ? tail.split(':') : [];
  // A trailing dotted IPv4 part (`64:ff9b::192.0.2.1`) stands for two groups.
  const width = right.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
  const groups = address.includes('::') ? [...left, ...Array<string>(Math.max(0, 8 - left.length - width)).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
