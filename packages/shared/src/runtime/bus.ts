import { ErrorCode, type Msg, type NatsConnection, type NatsError } from 'nats';
import { AppError, ErrorReplySchema } from '../errors/app-error.js';
import type { CallContext } from '../contracts/context.js';
import type { EventContract, ReplyOf, RequestOf, SubjectContract } from '../contracts/subject.js';
import type { z } from 'zod';
import { contextToHeaders, decodeJson, encodeJson } from './codec.js';
import { prefixed } from './subjects.js';
import type { NatsRequestOutcome } from '../observability/metrics.js';
import { currentScope } from '../observability/scope.js';
import { activeTraceContext, endSpan, injectTraceContext, SpanKind, startSpan } from '../observability/trace-context.js';

/** The header our runtime sets on error replies, besides the Service API's own. */
export const ERROR_HEADER = 'Nats-Service-Error-Code';

/**
 * Request-reply over NATS with the shared contracts: validates the request before sending and the
 * reply on arrival, turns typed error replies back into AppError, and bounds every call in time.
 */
export class Bus {
  constructor(
    private readonly nc: NatsConnection,
    private readonly prefix: string,
    private readonly timeoutMs: number,
  ) {}

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
   * One call, observed: a CLIENT span whose context travels in the `traceparent` header, and its
   * duration in `ccs_nats_request_duration_seconds` by outcome, in the metrics of the service
   * (or gateway) whose work makes the call.
   */
  async request<C extends SubjectContract>(
    contract: C,
    payload: RequestOf<C>,
    ctx: CallContext,
    opts: { timeoutMs?: number } = {},
  ): Promise<ReplyOf<C>> {
    const body = contract.request.parse(payload);
    const started = performance.now();
    const { span, context } = startSpan(contract.subject, SpanKind.CLIENT, activeTraceContext(), {
      'messaging.system': 'nats',
      'messaging.destination.name': contract.subject,
    });
    let outcome: NatsRequestOutcome = 'error';
    try {
      const headers = contextToHeaders(ctx);
      injectTraceContext(context, headers);
      let msg: Msg;
      try {
        msg = await this.nc.request(prefixed(this.prefix, contract.subject), encodeJson(body), { timeout: opts.timeoutMs ?? this.timeoutMs, headers });
      } catch (err) {
        outcome = transportOutcome(err as NatsError);
        throw transportError(err as NatsError, contract.subject);
      }
      const reply = decodeReply(contract, msg);
      outcome = 'ok';
      return reply;
    } finally {
      endSpan(span, outcome !== 'ok', { 'ccs.outcome': outcome });
      currentScope()?.metrics.requested(contract.subject, outcome, (performance.now() - started) / 1000);
    }
  }
}

/** The reply's payload checked against the contract; a typed error reply becomes its AppError again. */
function decodeReply<C extends SubjectContract>(contract: C, msg: Msg): ReplyOf<C> {
  const decoded = decodeJson(msg.data);
  if (msg.headers?.get(ERROR_HEADER)) {
    const errors = ErrorReplySchema.safeParse(decoded);
    if (errors.success) throw AppError.many(errors.data.errors);
    throw AppError.internal();
  }
  const reply = contract.reply.safeParse(decoded);
  if (!reply.success) throw AppError.internal();
  return reply.data as ReplyOf<C>;
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
    return new AppError({
      status: 504,
      code: 'service_timeout',
      title: 'Gateway Timeout',
      detail: `The ${service} service did not answer in time. Retry shortly.`,
    });
  }
  return AppError.unavailable('messaging_unavailable', 'The message bus is not available. Retry shortly.');
}
