/** Bounds of a ReplyCache. */
export interface ReplyCacheOptions {
  /** How long a reply is served after its request started; 0 turns the cache off. */
  ttlMs: number;
  /** Most replies kept (oldest out first). */
  maxEntries?: number;
  /** Most bytes of replies (as JSON) kept (oldest out first). */
  maxBytes?: number;
}

interface Entry {
  appId: string;
  value: unknown;
  /** When it stops being served: its request's start plus the TTL. */
  expires: number;
  bytes: number;
}

/**
 * The gateway's memory of recent successful replies to content-only reads (the catalog, its odds,
 * collections and collectibles without a player), so a read repeated within `ttlMs` costs no NATS
 * request. Keyed by app, subject and the request payload (as stable JSON). Errors are never kept.
 *
 * - Bounded: at most `maxEntries` replies and `maxBytes` of them, oldest out first.
 * - One request in flight per key: concurrent misses share it (and its failure).
 * - `contentChanged(appId)` (the ContentChanged notice) drops the app's replies at once and bumps
 *   the app's generation: a reply whose request started before the notice is still answered to
 *   its callers but never kept, and no later miss joins its request. A lost notice costs at most
 *   `ttlMs` (an entry is served until its request's start plus the TTL).
 *
 * Kept replies are frozen: a route that changed one would change every later answer.
 */
export class ReplyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inFlight = new Map<string, { appId: string; reply: Promise<unknown> }>();
  /** Per app, bumped by each ContentChanged; one number per app that ever changed content. */
  private readonly generations = new Map<string, number>();
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private bytes = 0;

  constructor(private readonly opts: ReplyCacheOptions) {
    this.maxEntries = opts.maxEntries ?? 5_000;
    this.maxBytes = opts.maxBytes ?? 32 * 1024 * 1024;
  }

  get enabled(): boolean {
    return this.opts.ttlMs > 0;
  }

  /** Replies kept now (expired ones included until they are read or pushed out). */
  get size(): number {
    return this.entries.size;
  }

  /** The kept reply to this read, else the reply `load` gives (kept when it succeeds). */
  get<T>(appId: string, subject: string, payload: unknown, load: () => Promise<T>): Promise<T> {
    if (!this.enabled) return load();
    const key = `${appId} ${subject} ${stableJson(payload)}`;
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit) {
      if (hit.expires > now) return Promise.resolve(hit.value as T);
      this.remove(key, hit);
    }
    const flying = this.inFlight.get(key);
    if (flying) return flying.reply as Promise<T>;

    const generation = this.generations.get(appId) ?? 0;
    const reply = load().then(
      (value) => {
        if (this.inFlight.get(key)?.reply === reply) this.inFlight.delete(key);
        if ((this.generations.get(appId) ?? 0) === generation) this.store(key, appId, value, now + this.opts.ttlMs);
        return value;
      },
      (err: unknown) => {
        if (this.inFlight.get(key)?.reply === reply) this.inFlight.delete(key);
        throw err;
      },
    );
    this.inFlight.set(key, { appId, reply });
    return reply;
  }

  /** The app's content changed: forget its replies and keep none whose request started before. */
  contentChanged(appId: string): void {
    this.generations.set(appId, (this.generations.get(appId) ?? 0) + 1);
    for (const [key, entry] of this.entries) if (entry.appId === appId) this.remove(key, entry);
    for (const [key, flight] of this.inFlight) if (flight.appId === appId) this.inFlight.delete(key);
  }

  private store(key: string, appId: string, value: unknown, expires: number): void {
    if (expires <= Date.now()) return;
    const bytes = key.length + JSON.stringify(value).length;
    if (bytes > this.maxBytes) return;
    const old = this.entries.get(key);
    if (old) this.remove(key, old);
    while (this.entries.size >= this.maxEntries || this.bytes + bytes > this.maxBytes) {
      const [oldestKey, oldest] = this.entries.entries().next().value!;
      this.remove(oldestKey, oldest);
    }
    this.entries.set(key, { appId, value: deepFreeze(value), expires, bytes });
    this.bytes += bytes;
  }

  private remove(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }
}

/**
 * JSON with every object's members in name order and undefined members left out, so two payloads
 * that say the same thing make the same key whatever order their members were built in.
 */
export function stableJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  const record = value as Record<string, unknown>;
  const members: string[] = [];
  for (const name of Object.keys(record).sort()) {
    if (record[name] !== undefined) members.push(`${JSON.stringify(name)}:${stableJson(record[name])}`);
  }
  return `{${members.join(',')}}`;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}
