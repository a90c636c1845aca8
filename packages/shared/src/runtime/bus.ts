import { createInbox, ErrorCode, Events, NatsError, type Msg, type MsgHdrs, type NatsConnection } from 'nats';
import { AppError, ErrorReplySchema } from '../errors/app-error.js';
import { HEADER, type CallContext } from '../contracts/context.js';
import { repeatable, type EventContract, type ReplyOf, type RequestOf, type SubjectContract } from '../contracts/subject.js';
import type { z } from 'zod';
import { contextToHeaders, decodeJson, encodeJson } from './codec.js';
import { nestedBound } from './deadline.js';
import { prefixed } from './subjects.js';
import type { NatsRequestOutcome } from '../observability/metrics.js';
import { currentScope } from '../observability/scope.js';
import { activeTraceContext, endSpan, injectTraceContext, SpanKind, startSpan } from '../observability/trace-context.js';

/** The header our runtime sets on error replies, besides the Service API's own. */
export const ERROR_HEADER = 'Nats-Service-Error-Code';

/** How a Bus treats what its callers hand it. */
export interface BusOptions {
  /**
   * Parse every request payload with its contract before sending (default true). A caller whose
   * payloads are built only from input it validated itself (the gateway) turns it off: see
   * "Where payloads are validated" on Bus.
   */
  validateRequests?: boolean;
  /**
   * Bound on read-only calls (contracts declared with defineQuery), when shorter than the
   * constructor's: a read that cannot be answered soon is better failed and retried, while a
   * write gets the full bound so that work which completes is answered, not cut off.
   */
  readTimeoutMs?: number;
}

/**
 * Request-reply over NATS with the shared contracts: turns typed error replies back into
 * AppError, and bounds every call in time.
 *
 * Where payloads are validated (each check once, at a boundary):
 * - Requests: the responder parses every request with its contract on arrival (addEndpoint) and
 *   answers `bad_request` `invalid_message` when it fails, so the parse here is a second check of
 *   the same thing. It is kept by default, because services and the admin CLI build payloads from data no
 *   one validated (an operator's content file, a row), and there a bad payload should fail in the
 *   caller, before anything is sent; and because the parse applies the contract's defaults (e.g.
 *   ListChestTypes' `sort`, AppContentSchema's) and strips unknown members before they cross the
 *   wire. The gateway's Bus (`validateRequests: false`, see its app.ts) skips it: every payload it
 *   sends is built from path, query and body values its routes validated first, against bounds
 *   at least as tight as the contract's, and the responder applies the same defaults on arrival,
 *   so the handler receives exactly what it received before.
 * - Replies: the responder parses its handler's reply with the contract before sending it
 *   (addEndpoint: a reply that breaks it is an `internal` error there and never leaves), and sends
 *   the parsed value, so a successful reply arrives already in the contract's shape, defaults applied and
 *   unknown members stripped. Parsing it again here re-validated what was validated a moment
 *   before; what remains is a cheap structural guard: a reply that is not a JSON object (every
 *   reply contract is an object) is an `internal` error, as a failed parse was. Error replies are
 *   still parsed (ErrorReplySchema): they are rare, and become the AppError the caller throws.
 */
export class Bus {
  private readonly validateRequests: boolean;
  private readonly readTimeoutMs: number;
  /** The PING that `heardAll` callers wait for, until it is sent. */
  private nextPing: Promise<void> | undefined;

  constructor(
    private readonly nc: NatsConnection,
    /** The NATS subject prefix of the stack this bus talks to (NATS_PREFIX). */
    readonly prefix: string,
    private readonly timeoutMs: number,
    opts: BusOptions = {},
  ) {
    this.validateRequests = opts.validateRequests ?? true;
    this.readTimeoutMs = Math.min(opts.readTimeoutMs ?? timeoutMs, timeoutMs);
  }

  /** The same connection, prefix and bound with other options (e.g. the gateway's view without request parsing). */
  withOptions(opts: BusOptions): Bus {
    return new Bus(this.nc, this.prefix, this.timeoutMs, { validateRequests: this.validateRequests, readTimeoutMs: this.readTimeoutMs, ...opts });
  }

  /**
   * Receives every core-NATS notification of one kind (fire-and-forget hints such as cache
   * invalidation; invalid payloads are ignored); returns how to stop.
   */
  listen<P extends z.ZodType>(event: EventContract<P>, handle: (payload: z.infer<P>) => void): () => void {
    const sub = this.nc.subscribe(prefixed(this.prefix, event.subject), {
      callback: (_err, msg) => {
        const parsed = event.payload.safeParse(decodeJson(msg.data));
        if (parsed.success) handle(parsed.data);
      },
    });
    return () => sub.unsubscribe();
  }

  /**
   * Publishes one core-NATS notification (what `listen` receives): not durable, no reply, no
   * retry. Throws only when the connection cannot publish (closed, draining).
   */
  notify<P extends z.ZodType>(event: EventContract<P>, payload: z.input<P>): void {
    this.nc.publish(prefixed(this.prefix, event.subject), encodeJson(event.payload.parse(payload)));
  }

  /**
   * Resolves once this connection has handled every message the NATS server had routed to it
   * before the call, their `listen` callbacks included: the server answers a PING after everything
   * it queued to the connection before, and nats.js runs a message's callback as it reads it. So a
   * notice that another process published and flushed before something this call follows (a reply
   * the client read, then sent its next request here) has been heard when it resolves. Calls made
   * before the next PING leaves share it (one per turn of the event loop). Never fails: on a closed
   * connection, or past the read bound, it resolves all the same (the caller goes on with what it
   * heard).
   */
  heardAll(): Promise<void> {
    this.nextPing ??= new Promise<void>((resolve) => {
      setImmediate(() => {
        this.nextPing = undefined;
        const timer = setTimeout(resolve, this.readTimeoutMs);
        this.nc.flush().then(
          () => (clearTimeout(timer), resolve()),
          () => (clearTimeout(timer), resolve()),
        );
      });
    });
    return this.nextPing;
  }

  /**
   * One call, observed: a CLIENT span whose context travels in the `traceparent` header, and its
   * duration in `ccs_nats_request_duration_seconds` by outcome, in the metrics of the service
   * (or gateway) whose work makes the call.
   *
   * Lose a replica, not the call: a call that met no responder (the server's answer: the message
   * reached nobody, so sending it again cannot apply anything twice) is sent again every
   * NO_RESPONDERS_PAUSE_MS for up to NO_RESPONDERS_WINDOW_MS (a rolling restart's gap); a call
   * that timed out (its replica died holding it, or is stuck) is sent once more, to whichever
   * replica takes it, when that cannot apply it twice (`repeatable`: a read-only contract, or a
   * keyed-retry write carrying its idempotencyKey). Otherwise the first failure is the answer.
   */
  async request<C extends SubjectContract>(
    contract: C,
    payload: RequestOf<C>,
    ctx: CallContext,
    opts: { timeoutMs?: number } = {},
  ): Promise<ReplyOf<C>> {
    const body = this.validateRequests ? contract.request.parse(payload) : payload;
    const started = performance.now();
    const { span, context } = startSpan(contract.subject, SpanKind.CLIENT, activeTraceContext(), {
      'messaging.system': 'nats',
      'messaging.destination.name': contract.subject,
    });
    let outcome: NatsRequestOutcome = 'error';
    try {
      const headers = contextToHeaders(ctx);
      injectTraceContext(context, headers);
      const data = encodeJson(body);
      const fullBound = opts.timeoutMs ?? this.boundOf(contract);
      const mayRepeatTimeout = repeatable(contract, body);
      let msg: Msg | undefined;
      for (let timedOut = 0; msg === undefined;) {
        // Inside a call with a deadline, each try waits only for what is left of it (deadline.ts),
        // and tells the callee so: it answers before this caller must answer its own.
        const bound = nestedBound(ctx, fullBound);
        try {
          if (bound <= 0) throw NatsError.errorForCode(ErrorCode.Timeout);
          headers.set(HEADER.budget, String(Math.floor(bound)));
          msg = await replyInbox(this.nc).request(prefixed(this.prefix, contract.subject), data, headers, bound);
        } catch (err) {
          outcome = transportOutcome(err as NatsError);
          const waited = performance.now() - started;
          if (outcome === 'no_responders' && waited + NO_RESPONDERS_PAUSE_MS < NO_RESPONDERS_WINDOW_MS) {
            await new Promise((r) => setTimeout(r, NO_RESPONDERS_PAUSE_MS));
            continue;
          }
          if (outcome === 'timeout' && mayRepeatTimeout && timedOut++ === 0) continue;
          // A repeat that meets no replica cannot tell what the timed-out first try did: the answer
          // stays the timeout's (504: maybe applied), never 503 (which says to send it again).
          if (timedOut > 0 && outcome !== 'timeout') {
            outcome = 'timeout';
            throw transportError(NatsError.errorForCode(ErrorCode.Timeout), contract.subject);
          }
          throw transportError(err as NatsError, contract.subject);
        }
      }
      const reply = decodeReply<C>(msg);
      outcome = 'ok';
      return reply;
    } finally {
      endSpan(span, outcome !== 'ok', { 'ccs.outcome': outcome });
      currentScope()?.metrics.requested(contract.subject, outcome, (performance.now() - started) / 1000);
    }
  }

  /** The time bound of one call to `contract` when the caller names none. */
  boundOf(contract: SubjectContract): number {
    return contract.readOnly ? this.readTimeoutMs : this.timeoutMs;
  }
}

/** How long a call that met no responder keeps trying (a replica restarting), and the pause between tries. */
const NO_RESPONDERS_WINDOW_MS = 1_000;
const NO_RESPONDERS_PAUSE_MS = 100;

interface PendingReply {
  subject: string;
  resolve(msg: Msg): void;
  reject(err: NatsError): void;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * The replies of every Bus call on one connection, through one wildcard inbox subscription: what
 * nats.js' (muxed) `request` does, without its per-call allocations: a RequestOne with a deferred,
 * a timer promise raced against it and, after every reply, a NatsError made only to reject the
 * already settled deferred (noAsyncTraces does not spare that one). The outcomes are the same:
 * the reply; NoResponders on the server's 503 status (an empty reply); Timeout past the bound or
 * when the connection closes; the server's permission error when it refuses the publish; and the
 * errors nats.js' request throws up front (closed, draining).
 */
class ReplyInbox {
  private readonly pending = new Map<string, PendingReply>();
  /** Under the connection's inbox prefix (`_INBOX_<user>` with a NATS user: nobody else may read it). */
  private readonly base: string;
  private seq = 0;
  /** False once the subscription failed: the next call makes a new inbox. */
  usable = true;

  constructor(private readonly nc: NatsConnection) {
    this.base = `${createInbox((nc as { options?: { inboxPrefix?: string } }).options?.inboxPrefix)}.`;
    nc.subscribe(`${this.base}*`, { callback: (err, msg) => this.dispatch(err, msg) });
    void nc.closed().then(() => this.failAll(NatsError.errorForCode(ErrorCode.Timeout)));
    // The status stream ends (or fails) with the connection: nothing left to watch then.
    this.watchPermissions().catch(() => undefined);
  }

  request(subject: string, data: Uint8Array, headers: MsgHdrs, timeoutMs: number): Promise<Msg> {
    // As nats.js' request checks before sending.
    if (this.nc.isClosed()) return Promise.reject(NatsError.errorForCode(ErrorCode.ConnectionClosed));
    if (this.nc.isDraining()) return Promise.reject(NatsError.errorForCode(ErrorCode.ConnectionDraining));
    return new Promise<Msg>((resolve, reject) => {
      const token = (this.seq++).toString(36);
      const timer = setTimeout(() => {
        if (this.pending.delete(token)) reject(NatsError.errorForCode(ErrorCode.Timeout));
      }, timeoutMs || 1000);
      this.pending.set(token, { subject, resolve, reject, timer });
      try {
        this.nc.publish(subject, data, { reply: this.base + token, headers });
      } catch (err) {
        this.settle(token)?.reject(err as NatsError);
      }
    });
  }

  /** Takes a call off the pending list (undefined when it timed out or was answered already). */
  private settle(token: string): PendingReply | undefined {
    const p = this.pending.get(token);
    if (!p) return undefined;
    this.pending.delete(token);
    clearTimeout(p.timer);
    return p;
  }

  private dispatch(err: NatsError | null, msg: Msg): void {
    if (err) {
      this.usable = false;
      this.failAll(err);
      return;
    }
    const p = this.settle(msg.subject.slice(this.base.length));
    if (!p) return;
    if (msg.data.length === 0 && msg.headers?.code === 503) p.reject(NatsError.errorForCode(ErrorCode.NoResponders));
    else p.resolve(msg);
  }

  private failAll(err: NatsError): void {
    for (const token of [...this.pending.keys()]) this.settle(token)?.reject(err);
  }

  /** A publish the server refuses (permissions) fails the oldest call to that subject at once, as in nats.js. */
  private async watchPermissions(): Promise<void> {
    for await (const s of this.nc.status()) {
      const ctx = s.type === Events.Error ? s.permissionContext : undefined;
      if (!ctx) continue;
      const err = new NatsError(`Permissions Violation for ${ctx.operation} to "${ctx.subject}"`, ErrorCode.PermissionsViolation);
      if (ctx.operation === 'subscription' && ctx.subject === `${this.base}*`) {
        this.usable = false;
        this.failAll(err);
      } else if (ctx.operation === 'publish') {
        for (const [token, p] of this.pending) {
          if (p.subject === ctx.subject) {
            this.settle(token)?.reject(err);
            break;
          }
        }
      }
    }
  }
}

const inboxes = new WeakMap<NatsConnection, ReplyInbox>();

/** The connection's reply inbox (one per connection, shared by every Bus on it). */
function replyInbox(nc: NatsConnection): ReplyInbox {
  let inbox = inboxes.get(nc);
  if (!inbox?.usable) {
    inbox = new ReplyInbox(nc);
    inboxes.set(nc, inbox);
  }
  return inbox;
}

/**
 * The reply's payload (validated by the responder before sending: see Bus), guarded structurally:
 * anything but a JSON object is an `internal` error. A typed error reply (kind, code, detail,
 * source, meta: no HTTP status) becomes its AppError again.
 */
function decodeReply<C extends SubjectContract>(msg: Msg): ReplyOf<C> {
  const decoded = decodeJson(msg.data);
  if (msg.headers?.get(ERROR_HEADER)) {
    const errors = ErrorReplySchema.safeParse(decoded);
    if (errors.success) throw AppError.many(errors.data.errors);
    throw AppError.internal();
  }
  if (typeof decoded !== 'object' || decoded === null || Array.isArray(decoded)) throw AppError.internal();
  return decoded as ReplyOf<C>;
}

function transportOutcome(err: NatsError): NatsRequestOutcome {
  if (err.code === ErrorCode.NoResponders) return 'no_responders';
  if (err.code === ErrorCode.Timeout) return 'timeout';
  return 'error';
}

function transportError(err: NatsError, subject: string): AppError {
  const service = subject.split('.')[0];
  if (err.code === ErrorCode.NoResponders) {
    return AppError.unavailable('service_unavailable', `The ${service} service is not available. Retry shortly.`);
  }
  if (err.code === ErrorCode.Timeout) {
    return AppError.timeout('service_timeout', `The ${service} service did not answer in time. Retry shortly.`);
  }
  return AppError.unavailable('messaging_unavailable', 'The message bus is not available. Retry shortly.');
}
