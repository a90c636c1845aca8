import type { z } from 'zod';

/** One NATS request-reply subject: its unprefixed name and the zod schemas of both directions. */
export interface SubjectContract<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> {
  readonly subject: string;
  readonly request: Req;
  readonly reply: Res;
  /**
   * True for a call that changes nothing (defineQuery): callers bound it by the shorter read
   * timeout (NATS_READ_TIMEOUT_MS), because retrying it is always safe. Writes keep the longer
   * NATS_REQUEST_TIMEOUT_MS, so work that completes is answered rather than cut off.
   */
  readonly readOnly?: boolean;
}

export type RequestOf<C extends SubjectContract> = z.infer<C['request']>;
export type ReplyOf<C extends SubjectContract> = z.infer<C['reply']>;

/** Declares a subject contract; the subject is versioned, e.g. `wallet.v1.credit`. */
export function defineSubject<Req extends z.ZodType, Res extends z.ZodType>(subject: string, request: Req, reply: Res): SubjectContract<Req, Res> {
  if (!/^[a-z]+\.v\d+\.[a-zA-Z0-9_.-]+$/.test(subject)) throw new Error(`subject "${subject}" must be <service>.v<N>.<name>`);
  return { subject, request, reply };
}

/** Declares a read-only subject contract: one that changes nothing, bounded by the read timeout. */
export function defineQuery<Req extends z.ZodType, Res extends z.ZodType>(subject: string, request: Req, reply: Res): SubjectContract<Req, Res> {
  return { ...defineSubject(subject, request, reply), readOnly: true };
}

/** One durable JetStream message kind: subject (under the grants stream) and payload schema. */
export interface EventContract<P extends z.ZodType = z.ZodType> {
  readonly subject: string;
  readonly payload: P;
}

/** Declares a durable message kind. */
export function defineEvent<P extends z.ZodType>(subject: string, payload: P): EventContract<P> {
  return { subject, payload };
}
