import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { Worker } from '../runtime/service.js';
import { LocalMemo, LocalVersions } from './local-memo.js';

/** How long a reader trusts the shared pointer to an app's content version (a missed announcement heals within it). */
const VERSION_TTL_SECONDS = 60;

/**
 * The read cache of a content service (chests' catalog and odds, collections' collections and
 * collectibles): what an app's content version gives never changes, so it is cached under keys
 * that carry the version, `<REDIS_PREFIX><namespace>:<app>:v<version>:<what>`, and a new version is
 * a new key space at once. The current version of each app is itself shared under
 * `<REDIS_PREFIX><namespace>:<app>:version`, which the content consumer announces after each
 * commit (and `heard` from another replica's notice). In front of Redis each process keeps what it
 * read in memory and the version pointer for a moment, so most reads cost no round trip. Redis is
 * an accelerator, not a dependency: any failure (or no Redis, or a TTL of 0) reads the database.
 * Values are validated on the way out; a null (not found) is never stored, so random ids cannot
 * fill the cache.
 */
export class ContentCache {
  private readonly memo = new LocalMemo();
  private readonly versions = new LocalVersions();

  constructor(
    private readonly o: {
      redis: Redis | undefined;
      /** The key space: the service's name. */
      namespace: string;
      /** REDIS_PREFIX. */
      prefix: string;
      /** How long a cached value lives; 0 turns the cache off. */
      ttlSeconds: number;
      log: Logger;
    },
  ) {}

  private key(appId: string, rest: string): string {
    return `${this.o.prefix}${this.o.namespace}:${appId}:${rest}`;
  }

  /**
   * The app's current content version: this process's, else the shared pointer, else `load` (the
   * database). A value loaded is shared only if none is there (SET NX), so it never overwrites a
   * newer version announced meanwhile.
   */
  async version(appId: string, load: () => Promise<number | undefined>): Promise<number | undefined> {
    const local = this.versions.get(appId);
    if (local !== undefined) return local;
    const cached = await this.run((r) => r.get(this.key(appId, 'version')));
    if (cached && /^\d+$/.test(cached)) {
      this.versions.set(appId, Number(cached));
      return Number(cached);
    }
    const v = await load();
    if (v === undefined) return undefined;
    await this.run((r) => r.set(this.key(appId, 'version'), String(v), 'EX', Math.min(this.o.ttlSeconds, VERSION_TTL_SECONDS), 'NX'));
    if (this.o.ttlSeconds > 0) this.versions.set(appId, v);
    return v;
  }

  /** A value of the app's content `version`, loaded and stored on a miss. `what` names the read and its arguments (long ones are hashed). */
  async read<S extends z.ZodType>(appId: string, version: number, what: string, schema: S, load: () => Promise<z.infer<S>>): Promise<z.infer<S>> {
    if (this.o.ttlSeconds === 0) return load();
    const name = what.length > 120 ? createHash('sha256').update(what).digest('hex') : what;
    const localKey = `${appId}:v${version}:${name}`;
    const local = this.memo.get<z.infer<S>>(localKey);
    if (local !== undefined) return local;
    const remember = (value: z.infer<S>) => (value === null ? value : this.memo.set(localKey, value));
    const key = this.key(appId, `v${version}:${name}`);
    const raw = await this.run((r) => r.get(key));
    if (raw) {
      const hit = schema.safeParse(parseJson(raw));
      if (hit.success) return remember(hit.data);
      this.o.log.warn({ key }, 'unreadable cache entry; reloading');
    }
    const value = await load();
    if (value !== null) await this.run((r) => r.set(key, JSON.stringify(value), 'EX', this.o.ttlSeconds));
    return remember(value);
  }

  /** Announces a committed content version: this process and, through the shared pointer, every replica read it from now on. */
  async announce(appId: string, version: number): Promise<void> {
    this.versions.set(appId, version);
    this.memo.forget(`${appId}:`);
    await this.run((r) => r.set(this.key(appId, 'version'), String(version), 'EX', Math.min(this.o.ttlSeconds, VERSION_TTL_SECONDS) || 1));
  }

  /** Another replica's ContentChanged notice: this process reads that version from now on. */
  heard(appId: string, version: number): void {
    this.versions.advance(appId, version);
  }

  /** Deletes the Redis keys of the app's versions other than `version` (unreachable already; this only frees memory). */
  async dropOlderVersions(appId: string, version: number): Promise<void> {
    await this.run(async (r) => {
      let cursor = '0';
      do {
        const [next, keys] = await r.scan(cursor, 'MATCH', this.key(appId, 'v*'), 'COUNT', 200);
        const stale = keys.filter((k) => !k.startsWith(this.key(appId, `v${version}:`)));
        if (stale.length) await r.del(...stale);
        cursor = next;
      } while (cursor !== '0');
    });
  }

  private async run<T>(op: (r: Redis) => Promise<T>): Promise<T | undefined> {
    if (!this.o.redis || this.o.ttlSeconds === 0) return undefined;
    try {
      return await op(this.o.redis);
    } catch (err) {
      this.o.log.debug({ err: String(err) }, 'read cache unavailable; reading the database');
      return undefined;
    }
  }
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

/**
 * The Redis connection of a read cache: commands fail fast while Redis is away (no offline queue,
 * short timeouts), so reads fall back to Postgres at once; one warning per outage. The worker
 * closes the connection when the service stops.
 */
export async function connectCacheRedis(url: string, log: Logger, what: string): Promise<{ redis: Redis; worker: Worker }> {
  const redis = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 500, connectTimeout: 2000 });
  let warned = false;
  redis.on('error', (err) => {
    if (!warned) log.warn({ err: String(err) }, `Redis unavailable; ${what} are read from Postgres until it returns`);
    warned = true;
  });
  redis.on('ready', () => (warned = false));
  // A failed first connection is retried in the background by ioredis.
  await redis.connect().catch(() => undefined);
  return {
    redis,
    worker: {
      start() {},
      async stop() {
        await redis.quit().catch(() => redis.disconnect());
      },
    },
  };
}
