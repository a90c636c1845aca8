/**
 * What a scenario did, as its client saw it: the operations it attempted and the last answer of
 * each (after its retries). The ground truth (truth.ts) is compared with this.
 */
import type { Actor, Answer } from './client.js';

/** How an operation ended for the client. */
export type Outcome = 'ok' | 'refused' | 'unknown';

export function outcomeOf(a: Answer): Outcome {
  if (a.status >= 200 && a.status < 300) return 'ok';
  if (a.status >= 400 && a.status < 500) return 'refused';
  // "not completed; any amount taken will be refunded": an answer, not an unknown outcome.
  if (a.status === 503 && a.code === 'purchase_interrupted') return 'refused';
  // Nothing was done: the gateway was not listening, or no process of the service was there to ask.
  if (a.code === 'connection_refused' || (a.status === 503 && a.code === 'service_unavailable')) return 'refused';
  return 'unknown';
}

export interface CreditOp {
  playerId: string;
  key: string;
  amount: string;
  outcome: Outcome;
}

export interface PurchaseOp {
  playerId: string;
  outcome: Outcome;
  status: number;
  code?: string;
  purchaseId?: string;
  chestIds: string[];
}

/** A purchase as the client saw it: its last answer, and the chests it names when it was 201. */
export function purchaseOpOf(playerId: string, a: Answer, chestIds: string[]): PurchaseOp {
  return {
    playerId,
    outcome: outcomeOf(a),
    status: a.status,
    code: a.code,
    purchaseId: a.status === 201 ? a.body?.meta?.purchase_id : undefined,
    chestIds,
  };
}

export interface OpenOp {
  playerId: string;
  chestId: string;
  outcome: Outcome;
  status: number;
  code?: string;
  openingId?: string;
}

export interface RegistrationOp {
  email: string;
  key?: string;
  outcome: Outcome;
  status: number;
  code?: string;
  playerId?: string;
}

export class Outcomes {
  /** Every player whose data the scenario may have changed (its own players and those it registered). */
  readonly players: Actor[] = [];
  readonly credits: CreditOp[] = [];
  readonly purchases: PurchaseOp[] = [];
  readonly opens: OpenOp[] = [];
  readonly registrations: RegistrationOp[] = [];
  /** Every HTTP answer of the scenario, retries included. */
  answers: Answer[] = [];

  get attempted(): number {
    return this.credits.length + this.purchases.length + this.opens.length + this.registrations.length;
  }

  playerIds(): string[] {
    const ids = new Set(this.players.map((p) => p.id));
    for (const r of this.registrations) if (r.playerId) ids.add(r.playerId);
    return [...ids];
  }

  /** 5xx answers by status and code, e.g. { "503 service_unavailable": 12 } (0 = connection failed, -1 = client timeout). */
  fiveXX(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const a of this.answers) {
      if (a.status > 0 && a.status < 500) continue;
      const k = `${a.status} ${a.code ?? ''}`.trim();
      out[k] = (out[k] ?? 0) + 1;
    }
    return out;
  }
}
