/** One answer of chests.v1.purchase_restrictions: the refused currencies and the content version judged. */
export interface Restrictions {
  refused: Record<string, string>;
  version: number;
}

/** Taken before asking chests (`ticket`), handed to `set` with the answer. */
export interface MemoTicket {
  readonly forgets: number;
  readonly at: number;
}

/**
 * The gateway's short memory of each player's purchase restrictions (which currencies the
 * compliance gate refuses them), for the catalog's `meta.purchasable`, `meta.requires_key.allowed`
 * and `meta.unlock.skip_allowed` only. Without it every catalog read with a token cost two more
 * hops (gateway → chests → players, and players' profile read in Postgres): 0.15 of the echo
 * floor (docs/performance.md, "The catalog with a token").
 *
 * Every gateway replica keeps its own, and each hears what makes an answer stale
 * (plugins/purchase-flags.ts):
 * - a player's new country or birth year (ComplianceProfileChanged, by the player or the studio):
 *   `forget` drops that player, and an answer asked before it is never kept (`ticket`);
 * - a new content version of chests (ContentChanged): `contentChanged` makes every kept answer of
 *   the app judged by an older version a miss, and such an answer arriving later is not kept.
 * A notice is core NATS (at most once): a lost one leaves an answer for at most `ttlMs` from the
 * start of the request that read it. The flags are advice, never the decision: a purchase, a key
 * and a skip pass the gate itself, with the profile read fresh. Bounded (oldest out first); a TTL
 * of 0 turns it off.
 */
export class RestrictionsMemo {
  private readonly entries = new Map<string, { refused: Readonly<Record<string, string>>; version: number; until: number }>();
  /** Per app, the newest content version chests announced; one number per app that ever changed content. */
  private readonly versions = new Map<string, number>();
  /** How many players were forgotten so far: an answer asked before the latest one is not kept. */
  private forgets = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly max = 20_000,
  ) {}

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  private static key(appId: string, playerId: string): string {
    return `${appId}:${playerId.toLowerCase()}`;
  }

  /** The kept refused currencies of this player, or undefined (then ask chests, with a `ticket` taken first). */
  get(appId: string, playerId: string): Readonly<Record<string, string>> | undefined {
    const key = RestrictionsMemo.key(appId, playerId);
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.until > Date.now() && hit.version >= (this.versions.get(appId) ?? 0)) return hit.refused;
    this.entries.delete(key);
    return undefined;
  }

  /** What `set` needs to know whether anything changed while chests was asked. */
  ticket(): MemoTicket {
    return { forgets: this.forgets, at: Date.now() };
  }

  /**
   * Keeps an answer asked with `ticket`, unless a player was forgotten since (it may be theirs, read
   * before the change) or it judged older content than the app's newest announced version.
   */
  set(appId: string, playerId: string, answer: Restrictions, ticket: MemoTicket): void {
    if (!this.enabled || ticket.forgets !== this.forgets || answer.version < (this.versions.get(appId) ?? 0)) return;
    const key = RestrictionsMemo.key(appId, playerId);
    this.entries.delete(key);
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { refused: Object.freeze({ ...answer.refused }), version: answer.version, until: ticket.at + this.ttlMs });
  }

  /** The player changed what the gate reads (country, birth year): ask again on the next read. */
  forget(appId: string, playerId: string): void {
    this.forgets++;
    this.entries.delete(RestrictionsMemo.key(appId, playerId));
  }

  /** Chests took `version` of the app's content: answers judged by an older one are stale. */
  contentChanged(appId: string, version: number): void {
    if (version > (this.versions.get(appId) ?? 0)) this.versions.set(appId, version);
  }
}
