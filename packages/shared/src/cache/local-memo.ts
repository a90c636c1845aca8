/**
 * In-process memory in front of the shared (Redis) caches, for values that never change once
 * computed: everything keyed by an app's content version. A hit costs no round trip and no
 * parsing. Bounded (least recently used out first); values are frozen, so no reader can change
 * what the next one gets.
 */
export class LocalMemo {
  private readonly entries = new Map<string, unknown>();

  constructor(private readonly max = 5_000) {}

  get<T>(key: string): T | undefined {
    const hit = this.entries.get(key);
    if (hit === undefined) return undefined;
    // Refresh its place: the most recently used go out last.
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit as T;
  }

  set<T>(key: string, value: T): T {
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, deepFreeze(value));
    return value;
  }

  /** Forgets every key starting with `prefix` (an app's older content versions). */
  forget(prefix: string): void {
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) this.entries.delete(key);
  }
}

/**
 * A short-lived local copy of each app's current content version (the shared pointer lives in
 * Redis). Another replica's content change reaches this process with its ContentChanged notice
 * (`advance`), or within `ttlMs` when the notice is lost; this process's own change at once (`set`).
 */
export class LocalVersions {
  private readonly versions = new Map<string, { version: number; until: number }>();

  constructor(private readonly ttlMs = 1_000) {}

  get(appId: string): number | undefined {
    const v = this.versions.get(appId);
    return v && v.until > Date.now() ? v.version : undefined;
  }

  set(appId: string, version: number): void {
    if (this.versions.size >= 10_000) this.versions.clear();
    this.versions.set(appId, { version, until: Date.now() + this.ttlMs });
  }

  /**
   * Another replica announced `version` (a ContentChanged notice): taken now unless this process
   * already knew it or a later one, even from an expired entry (a late notice must not go back).
   */
  advance(appId: string, version: number): void {
    const known = this.versions.get(appId);
    if (known && known.version >= version) return;
    this.set(appId, version);
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}
