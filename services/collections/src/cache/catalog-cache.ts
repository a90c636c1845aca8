import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { z } from 'zod';
import { LocalMemo, LocalVersions, type Logger, type Pool } from '@ccs/shared';
import { contentVersion } from '../repositories/catalog-repo.js';

/** How long a reader trusts the cached pointer to an app's content version. */
const VERSION_TTL_SECONDS = 60;

/**
 * Redis cache of the non-player parts of collection reads. Keys are
 * `<REDIS_PREFIX>collections:<app>:v<content version>:<what>`, so a new content version makes
 * every older entry unreachable at once; the current version of each app is itself cached under
 * `<REDIS_PREFIX>collections:<app>:version`, which the content consumer overwrites after each
 * commit. Values are validated on the way out; any Redis failure falls back to Postgres.
 * In front of Redis, each process keeps what it read in memory (a versioned value never changes)
 * and the version pointer for a second, so most reads cost no round trip at all.
 */
export class CatalogCache {
  private readonly memo = new LocalMemo();
  private readonly versions = new LocalVersions();

  constructor(
    private readonly redis: Redis | undefined,
    private readonly pool: Pool,
    private readonly prefix: string,
    private readonly ttlSeconds: number,
    private readonly log: Logger,
  ) {}

  private versionKey(appId: string): string {
    return `${this.prefix}collections:${appId}:version`;
  }

  /** The app's current content version (undefined before its content arrived). */
  async version(appId: string): Promise<number | undefined> {
    const local = this.versions.get(appId);
    if (local !== undefined) return local;
    const cached = await this.get(this.versionKey(appId));
    if (cached !== null && /^\d+$/.test(cached)) {
      this.versions.set(appId, Number(cached));
      return Number(cached);
    }
    const v = await contentVersion(this.pool, appId);
    // NX: never overwrite a newer version the content consumer announced meanwhile.
    if (v !== undefined) await this.run((r) => r.set(this.versionKey(appId), String(v), 'EX', VERSION_TTL_SECONDS, 'NX'));
    if (v !== undefined && this.ttlSeconds > 0) this.versions.set(appId, v);
    return v;
  }

  /** Announces a committed content version, so readers move to its keys at once. */
  async announce(appId: string, version: number): Promise<void> {
    this.versions.set(appId, version);
    this.memo.forget(`${appId}:`);
    await this.run((r) => r.set(this.versionKey(appId), String(version), 'EX', VERSION_TTL_SECONDS));
  }

  /** Another replica's ContentChanged notice: this process reads that version from now on. */
  heard(appId: string, version: number): void {
    this.versions.advance(appId, version);
  }

  /**
   * A cached value of the app's content version `version`, loaded and stored on a miss (a null
   * answer is not stored). `what` names the read and its arguments; long ones are hashed.
   */
  async read<S extends z.ZodType>(appId: string, version: number, what: string, schema: S, load: () => Promise<z.infer<S>>): Promise<z.infer<S>> {
    if (this.ttlSeconds === 0) return load();
    const what_ = what.length > 120 ? createHash('sha256').update(what).digest('hex') : what;
    const local = this.memo.get<z.infer<S>>(`${appId}:v${version}:${what_}`);
    if (local !== undefined) return local;
    const remember = (value: z.infer<S>) => (value === null ? value : this.memo.set(`${appId}:v${version}:${what_}`, value));
    if (!this.redis) return remember(await load());
    const key = `${this.prefix}collections:${appId}:v${version}:${what_}`;
    const raw = await this.get(key);
    if (raw !== null) {
      const hit = schema.safeParse(parseJson(raw));
      if (hit.success) return remember(hit.data);
      this.log.warn({ key }, 'unreadable cache entry; reloading');
    }
    const value = await load();
    // Misses are not stored: any string can be asked for, and must not fill Redis.
    if (value !== null) await this.run((r) => r.set(key, JSON.stringify(value), 'EX', this.ttlSeconds));
    return remember(value);
  }

  private async get(key: string): Promise<string | null> {
    if (!this.redis || this.ttlSeconds === 0) return null;
    return (await this.run((r) => r.get(key))) ?? null;
  }

  private async run<T>(op: (r: Redis) => Promise<T>): Promise<T | undefined> {
    if (!this.redis || this.ttlSeconds === 0) return undefined;
    try {
      return await op(this.redis);
    } catch {
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
