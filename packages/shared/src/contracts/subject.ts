import { z } from 'zod';

/**
 * Who may call a subject: `gateway` (an HTTP route, or readiness), `admin` (the operator's command
 * line, tools/admin) or one of the services. Each is a NATS user of its own (deploy/nats).
 */
export type Caller = 'gateway' | 'admin' | ServiceName;

/** The backend services (each answers its own `<service>.v1.*` subjects). */
export type ServiceName = 'players' | 'wallet' | 'chests' | 'collections' | 'egress' | 'store';

/** What a subject declares besides its schemas: who calls it. */
export interface SubjectOptions {
  /**
   * The processes that call this subject. The NATS permissions are generated from it
   * (packages/shared/src/ops/nats-permissions.ts): no other user may publish to the subject.
   */
  readonly callers: readonly [Caller, ...Caller[]];
  /**
   * True for a write whose request may carry an `idempotencyKey` under which repeating it applies
   * it at most once and answers as the first time (opening, batch opening, credit), or, when the
   * client sent none, the `retryKey` the gateway made for that HTTP request alone (RetryKeySchema).
   * Such a request WITH a key may be sent again after a timeout, and handled again after a lost
   * database connection (see repeatable()).
   */
  readonly keyedRetry?: boolean;
}

/** One NATS request-reply subject: its unprefixed name, the zod schemas of both directions and its callers. */
export interface SubjectContract<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> {
  readonly subject: string;
  readonly request: Req;
  readonly reply: Res;
  /** The processes allowed to call it (SubjectOptions.callers). */
  readonly callers: readonly Caller[];
  /**
   * True for a call that changes nothing (defineQuery): callers bound it by the shorter read
   * timeout (NATS_READ_TIMEOUT_MS), because retrying it is always safe. Writes keep the longer
   * NATS_REQUEST_TIMEOUT_MS, so work that completes is answered rather than cut off.
   */
  readonly readOnly?: boolean;
  /** SubjectOptions.keyedRetry. */
  readonly keyedRetry?: boolean;
}

/**
 * Whether handling `request` again cannot apply it twice: a read-only contract, or a keyed-retry
 * contract's request that carries its idempotencyKey. The bus sends such a call once more after
 * a timeout, and a service handles it again after losing its database connection.
 */
export function repeatable(contract: SubjectContract, request: unknown): boolean {
  if (contract.readOnly) return true;
  if (!contract.keyedRetry) return false;
  const r = request as { idempotencyKey?: unknown; retryKey?: unknown } | null;
  const key = r?.idempotencyKey ?? r?.retryKey;
  return typeof key === 'string' && key.length > 0;
}

/**
 * The key the gateway attaches to a keyed-retry write whose client sent no Idempotency-Key (a
 * UUID made for that HTTP request alone): a repeat of the request (the bus sending it again to
 * another replica after a timeout) applies it at most once. Unlike a client's key it stores no
 * answer for later requests and is never reported back as a replay.
 */
export const RetryKeySchema = z.string().uuid();

export type RequestOf<C extends SubjectContract> = z.infer<C['request']>;
export type ReplyOf<C extends SubjectContract> = z.infer<C['reply']>;

/**
 * Declares a subject contract; the subject is versioned, e.g. `wallet.v1.credit`, and names its
 * callers, e.g. `{ callers: ['gateway'] }`.
 */
export function defineSubject<Req extends z.ZodType, Res extends z.ZodType>(
  subject: string,
  request: Req,
  reply: Res,
  { callers, keyedRetry }: SubjectOptions,
): SubjectContract<Req, Res> {
  if (!/^[a-z]+\.v\d+\.[a-zA-Z0-9_.-]+$/.test(subject)) throw new Error(`subject "${subject}" must be <service>.v<N>.<name>`);
  if (new Set(callers).size !== callers.length) throw new Error(`subject "${subject}" lists a caller twice`);
  return { subject, request, reply, callers, ...(keyedRetry ? { keyedRetry } : {}) };
}

/** Declares a read-only subject contract: one that changes nothing, bounded by the read timeout. */
export function defineQuery<Req extends z.ZodType, Res extends z.ZodType>(
  subject: string,
  request: Req,
  reply: Res,
  options: SubjectOptions,
): SubjectContract<Req, Res> {
  return { ...defineSubject(subject, request, reply, options), readOnly: true };
}

/** Who publishes a message kind and, for a core-NATS notice, who listens to it. */
export interface EventOptions {
  /**
   * The services that publish it: a grant (`grants.…`) from their outboxes, a notice (`events.…`)
   * directly. The NATS permissions are generated from it: no other user may publish it.
   */
  readonly publishers: readonly [ServiceName, ...ServiceName[]];
  /** A notice's subscribers (grants are read through durable consumers instead). */
  readonly listeners?: readonly Caller[];
}

/**
 * One message kind: a durable JetStream message (under the grants stream) or a core-NATS notice,
 * its payload schema and, for the stack's own kinds, who publishes and listens (EventOptions).
 */
export interface EventContract<P extends z.ZodType = z.ZodType> {
  readonly subject: string;
  readonly payload: P;
  readonly publishers?: readonly ServiceName[];
  readonly listeners?: readonly Caller[];
}

/**
 * Declares a message kind. The contracts of the stack declare their publishers (and a notice its
 * listeners); a test's own message kind may leave them out.
 */
export function defineEvent<P extends z.ZodType>(subject: string, payload: P, options?: EventOptions): EventContract<P> {
  return { subject, payload, ...options };
}
