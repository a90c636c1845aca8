import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { LocalMemo, LocalVersions } from '@ccs/shared';
import type { z } from 'zod';

/**
 * Read-through cache of catalog pages, chest details and odds in Redis. Keys carry the app and its
 * content version (`<REDIS_PREFIX>chests:<app>:v<version>:<name>`), so a new version is a new key
 * space; the content consumer also deletes the old keys. Redis being down only costs speed.
 * In front of Redis, each process keeps what it read in memory (a versioned value never changes)
 * and the version pointer for a second, so most catalog reads cost no round trip at all.
 */
export class CatalogCache {
  private readonly memo = new LocalMemo();
  private readonly versions = new LocalVersions();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlSeconds: number,
    private readonly log: Logger,
  ) {}

  // The version pointer lives briefly, so a missed invalidation (Redis down) heals within a minute.
  private get versionTtl(): number {
    return Math.min(this.ttlSeconds, 60);
  }

  private versionKey(appId: string): string {
    return `${this.prefix}chests:${appId}:version`;
  }

  /**
   * The app's current content version: from Redis, else from `load`. A value read from the
   * database is only stored if none is there (SET NX), so it never overwrites a newer version
   * that the content consumer announced meanwhile.
   */
  async version(appId: string, load: () => Promise<number | undefined>): Promise<number | undefined> {
    const local = this.versions.get(appId);
    if (local !== undefined) return local;
    const cached = await this.safe(() => this.redis.get(this.versionKey(appId)));
    if (cached && /^\d+$/.test(cached)) {
      this.versions.set(appId, Number(cached));
      return Number(cached);
    }
    const v = await load();
    if (v !== undefined) await this.safe(() => this.redis.set(this.versionKey(appId), String(v), 'EX', this.versionTtl, 'NX'));
    if (v !== undefined) this.versions.set(appId, v);
    return v;
  }

  /**
   * A cached value of the app's content version, or the loaded one (then cached). A `null` (not
   * found) is not cached, so random ids cannot fill the cache.
   */
  async getOrLoad<T>(appId: string, version: number, name: string, schema: z.ZodType<T>, load: () => Promise<T>): Promise<T> {
    const local = this.memo.get<T>(`${appId}:v${version}:${name}`);
    if (local !== undefined) return local;
    const remember = (value: T) => (value === null ? value : this.memo.set(`${appId}:v${version}:${name}`, value));
    const key = `${this.prefix}chests:${appId}:v${version}:${name}`;
    const hit = await this.safe(() => this.redis.get(key));
    if (hit) {
      const raw: unknown = JSON.parse(hit);
      const parsed = schema.safeParse(raw);
      if (parsed.success) return remember(parsed.data);
    }
    const value = await load();
    if (value !== null) await this.safe(() => this.redis.set(key, JSON.stringify(value), 'EX', this.ttlSeconds));
    return remember(value);
  }

  /**
   * Announces a new content version (this process, then every replica through the shared pointer);
   * `dropOlderVersions` then removes the keys of older ones.
   */
  async contentChanged(appId: string, version: number): Promise<void> {
    this.versions.set(appId, version);
    this.memo.forget(`${appId}:`);
    await this.safe(() => this.redis.set(this.versionKey(appId), String(version), 'EX', this.versionTtl));
  }

  /** Another replica's ContentChanged notice: this process reads that version from now on. */
  heard(appId: string, version: number): void {
    this.versions.advance(appId, version);
  }

  /** Deletes the Redis keys of the app's versions other than `version` (unreachable already). */
  async dropOlderVersions(appId: string, version: number): Promise<void> {
    await this.safe(async () => {
      let cursor = '0';
      do {
        const [next, keys] = await this.redis.scan(cursor, 'MATCH', `${this.prefix}chests:${appId}:v*`, 'COUNT', 200);
        const stale = keys.filter((k) => !k.startsWith(`${this.prefix}chests:${appId}:v${version}:`));
        if (stale.length) await this.redis.del(...stale);
        cursor = next;
      } while (cursor !== '0');
    });
  }

  private async safe<T>(op: () => Promise<T>): Promise<T | undefined> {
    try {
      return await op();
    } catch (err) {
      this.log.warn({ err: String(err) }, 'catalog cache unavailable; reading from the database');
      return undefined;
    }
  }
}
