import { ComplianceProfileChanged, GetComplianceProfile, type Bus, type CallContext, type ReplyOf } from '@ccs/shared';

type ComplianceProfile = ReplyOf<typeof GetComplianceProfile>;

/**
 * The players' declared country and birth year, as the store's money limits need them, kept a
 * while per player so a purchase does not ask players every time. Every store replica forgets a
 * player on `events.players.compliance_profile_changed` (players publishes it after the change
 * commits, before it answers) and never keeps an answer whose request began before such a notice.
 * A kept answer is used only after one NATS round trip on this connection (`heardAll`), which
 * NATS answers after every notice it queued to this process before: a player who changes their
 * profile and then buys is judged on the new one. A lost notice (core NATS is at most once) is
 * bounded by `ttlMs`.
 */
export class ComplianceProfiles {
  private readonly kept = new Map<string, { profile: ComplianceProfile; until: number }>();
  /** When each player's last change notice arrived (ms), to refuse answers that began before it. */
  private readonly changed = new Map<string, number>();
  private readonly stopListening: () => void;

  constructor(
    private readonly bus: Bus,
    private readonly ttlMs = 60_000,
  ) {
    this.stopListening = bus.listen(ComplianceProfileChanged, ({ appId, playerId }) => {
      const key = `${appId} ${playerId.toLowerCase()}`;
      this.kept.delete(key);
      if (this.changed.size >= 10_000) this.changed.delete(this.changed.keys().next().value!);
      this.changed.set(key, performance.now());
    });
  }

  /** The calling player's declared profile (ctx names the app and the player). */
  async of(ctx: CallContext): Promise<ComplianceProfile> {
    const key = `${ctx.appId} ${ctx.playerId?.toLowerCase()}`;
    await this.bus.heardAll();
    const hit = this.kept.get(key);
    if (hit && hit.until > Date.now()) return hit.profile;
    const asked = performance.now();
    const profile = await this.bus.request(GetComplianceProfile, {}, ctx);
    if ((this.changed.get(key) ?? -1) < asked && this.ttlMs > 0) {
      if (this.kept.size >= 10_000) this.kept.delete(this.kept.keys().next().value!);
      this.kept.set(key, { profile, until: Date.now() + this.ttlMs });
    }
    return profile;
  }

  stop(): void {
    this.stopListening();
  }
}
