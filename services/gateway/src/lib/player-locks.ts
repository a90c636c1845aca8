import { GetPlayerLock, PlayerLockChanged, type Bus } from '@ccs/shared';

/**
 * Whether a player is locked by the studio (403 player_locked on every request with their token),
 * as each gateway replica knows it: asked of players (`players.v1.player_lock`) and kept for
 * `ttlMs` from the request that asked, at most `max` players (oldest out first).
 *
 * Every replica hears PlayerLockChanged (a plain subscription) and forgets that player; an answer
 * asked before a notice arrived is not kept (it may predate the change). Read-your-writes: players
 * answers a lock only once the NATS server has taken the notice, and the server has queued it to
 * every gateway connection by then; so before trusting a kept answer, a request waits for one PING
 * round trip on this replica's connection (`bus.heardAll()`, shared by every request of the same
 * event-loop turn), after which every notice queued before the request arrived has been handled.
 * A lock therefore holds from the next request through any replica; only a notice lost for good
 * (core NATS is at most once) leaves an answer stale, for at most `ttlMs`. A TTL of 0 keeps
 * nothing: every request with a token asks players.
 */
export class PlayerLocks {
  private readonly entries = new Map<string, { locked: boolean; until: number }>();
  /** Notices heard so far: an answer asked before the latest one is not kept. */
  private notices = 0;

  constructor(
    private readonly bus: Bus,
    private readonly ttlMs: number,
    private readonly max = 50_000,
  ) {}

  private static key(appId: string, playerId: string): string {
    return `${appId}:${playerId.toLowerCase()}`;
  }

  /** Starts hearing the notices; returns how to stop. */
  listen(): () => void {
    return this.bus.listen(PlayerLockChanged, ({ appId, playerId }) => {
      this.notices++;
      this.entries.delete(PlayerLocks.key(appId, playerId));
    });
  }

  private kept(key: string): boolean | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.until > Date.now()) return hit.locked;
    this.entries.delete(key);
    return undefined;
  }

  /** Whether the player is locked: what this replica kept, once every notice queued before now is heard; else players' answer. */
  async isLocked(appId: string, playerId: string, requestId: string): Promise<boolean> {
    const key = PlayerLocks.key(appId, playerId);
    if (this.kept(key) !== undefined) {
      await this.bus.heardAll();
      const now = this.kept(key);
      if (now !== undefined) return now;
    }
    const notices = this.notices;
    const at = Date.now();
    const { locked } = await this.bus.request(GetPlayerLock, {}, { requestId, appId, playerId });
    if (this.ttlMs > 0 && notices === this.notices) {
      this.entries.delete(key);
      if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, { locked, until: at + this.ttlMs });
    }
    return locked;
  }
}
