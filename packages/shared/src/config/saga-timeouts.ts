/**
 * The waits of the sagas against the gateway's bounds: a saga whose work completed must be
 * answered with its result, never with the gateway's 504 (a consumed chest answered 504 would make
 * the client think it failed). The gateway bounds an opening (and guest creation) by
 * NATS_REQUEST_TIMEOUT_MS, registration by CREDENTIALS_TIMEOUT_MS and a store purchase by
 * STORE_TIMEOUT_MS; inside them chests, players and the store wait up to GRANT_WAIT_MS for their
 * grants to be applied, after their own work (the store's after its calls to Google).
 */

/** Time left for a saga's own work (statements, publish) besides its grant wait, at least. */
export const SAGA_WORK_MARGIN_MS = 1000;

/** The settings that bound the sagas, as each process reads them (defaults applied). */
export interface SagaTimeouts {
  /** gateway: NATS_REQUEST_TIMEOUT_MS, the bound of open, batch open and guest creation. */
  gatewayRequestTimeoutMs: number;
  /** gateway: CREDENTIALS_TIMEOUT_MS, the bound of register and login. */
  gatewayCredentialsTimeoutMs: number;
  /** chests: GRANT_WAIT_MS. */
  chestsGrantWaitMs: number;
  /** players: GRANT_WAIT_MS. */
  playersGrantWaitMs: number;
  /** players: ARGON2_QUEUE_WAIT_MS, the longest a registration waits for a password slot. */
  playersPasswordQueueWaitMs: number;
  /** gateway: STORE_TIMEOUT_MS, the bound of a store purchase's verification. */
  gatewayStoreTimeoutMs: number;
  /** store: STORE_GOOGLE_TIMEOUT_MS, the bound of each of a Google purchase's two calls to Google. */
  storeGoogleTimeoutMs: number;
  /** store: GRANT_WAIT_MS. */
  storeGrantWaitMs: number;
}

/** One line per pair of settings that would let a completed saga answer 504; none when they fit. */
export function sagaTimeoutProblems(t: SagaTimeouts): string[] {
  const problems: string[] = [];
  const need = (what: string, wait: number, bound: number, names: string) => {
    if (wait + SAGA_WORK_MARGIN_MS > bound) {
      problems.push(
        `${names}: ${what} waits up to ${wait} ms but the gateway gives it ${bound} ms; keep the wait at least ${SAGA_WORK_MARGIN_MS} ms below the bound.`,
      );
    }
  };
  need('an opening', t.chestsGrantWaitMs, t.gatewayRequestTimeoutMs, 'GRANT_WAIT_MS (chests) vs NATS_REQUEST_TIMEOUT_MS (gateway)');
  need('a guest creation', t.playersGrantWaitMs, t.gatewayRequestTimeoutMs, 'GRANT_WAIT_MS (players) vs NATS_REQUEST_TIMEOUT_MS (gateway)');
  need(
    'a registration (password queue and grant wait)',
    t.playersPasswordQueueWaitMs + t.playersGrantWaitMs,
    t.gatewayCredentialsTimeoutMs,
    'ARGON2_QUEUE_WAIT_MS + GRANT_WAIT_MS (players) vs CREDENTIALS_TIMEOUT_MS (gateway)',
  );
  need(
    'a Google Play purchase (two calls to Google and the grant wait)',
    2 * t.storeGoogleTimeoutMs + t.storeGrantWaitMs,
    t.gatewayStoreTimeoutMs,
    '2 × STORE_GOOGLE_TIMEOUT_MS + GRANT_WAIT_MS (store) vs STORE_TIMEOUT_MS (gateway)',
  );
  return problems;
}
