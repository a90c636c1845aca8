/**
 * The gateway's short memory of each player's purchase restrictions (which currencies the
 * compliance gate refuses them), for the catalog's `meta.purchasable`, `meta.requires_key.allowed`
 * and `meta.unlock.skip_allowed` only. Without it every catalog read with a token cost two more
 * hops (gateway → chests → players, and players' profile read in Postgres): 0.15 of the echo
 * floor (docs/performance.md, "The catalog with a token").
 *
 * The flags are advice, never the decision: a purchase, a key and a skip pass the gate itself,
 * with the profile read fresh. So they may lag a change by at most `ttlMs`: a player's new
 * country or birth year (forgotten at once on the replica that took the change, `forget`), a new
 * content's compliance rules. Bounded (oldest out first); 0 turns it off.
 */
export class RestrictionsMemo {
  private readonly entries = new Map<string, { refused: Record<string, string>; until: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly max = 20_000,
  ) {}

  private static key(appId: string, playerId: string): string {
    return `${appId}:${playerId.toLowerCase()}`;
  }

  get(appId: string, playerId: string): Record<string, string> | undefined {
    const key = RestrictionsMemo.key(appId, playerId);
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.until > Date.now()) return hit.refused;
    this.entries.delete(key);
    return undefined;
  }

  set(appId: string, playerId: string, refused: Record<string, string>): void {
    if (this.ttlMs <= 0) return;
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(RestrictionsMemo.key(appId, playerId), { refused: Object.freeze({ ...refused }), until: Date.now() + this.ttlMs });
  }

  /** The player changed what the gate reads (country, birth year): ask again on the next read. */
  forget(appId: string, playerId: string): void {
    this.entries.delete(RestrictionsMemo.key(appId, playerId));
  }
}
