import type { Service } from 'nats';
import type { Logger } from '../config/logger.js';
import { AppError, isPermanentFailure, toAppError } from '../errors/app-error.js';
import type { ServiceMetrics } from '../observability/metrics.js';
import { observeHandler } from '../observability/nats-handler.js';
import { contextFromHeaders, decodeJson, encodeJson } from './codec.js';
import type { Endpoint } from './endpoint.js';
import { answerBy } from './deadline.js';
import { repeatOnDatabaseLoss } from './repeat-on-db-loss.js';
import { prefixed } from './subjects.js';

/** What registering one endpoint needs from the service starting it. */
export interface EndpointRegistration {
  service: string;
  prefix: string;
  log: Logger;
  metrics: ServiceMetrics;
  /** Handlings not finished yet; the service's stop waits for them. */
  inFlight: Set<Promise<unknown>>;
  /** False for the health subject (probes are neither traced nor logged per call). */
  traced: boolean;
}

/**
 * Registers one endpoint with the NATS Service API (in the service's queue group): the request is
 * validated against the contract before the handler runs and the reply after; a failure replies
 * with the typed error, its kind and code (a failure of the service, not a refusal of the request,
 * is logged, never its details sent). Each handling is observed (span, metrics by outcome, log
 * correlation: see observeHandler). The endpoint's unprefixed subject is its
 * metadata, so `$SRV.INFO` names the contract and `$SRV.STATS` can report our own tallies.
 */
export function addEndpoint(service: Service, ep: Endpoint, r: EndpointRegistration): void {
  const subject = prefixed(r.prefix, ep.contract.subject);
  const observation = { service: r.service, subject: ep.contract.subject, metrics: r.metrics, log: r.log, traced: r.traced };
  service.addEndpoint(ep.contract.subject.replace(/\./g, '_'), {
    subject,
    metadata: { contract: ep.contract.subject },
    handler: (err, msg) => {
      if (err) {
        r.log.error({ err: String(err), subject }, 'endpoint subscription failed');
        return;
      }
      const ctx = contextFromHeaders(msg.headers);
      const work = observeHandler(observation, msg.headers, ctx.requestId, async () => {
        try {
          const req = ep.contract.request.safeParse(decodeJson(msg.data));
          if (!req.success) {
            throw AppError.badRequest('invalid_message', `message on ${ep.contract.subject} failed validation`);
          }
          // A lost database connection is absorbed when handling again is safe (repeat-on-db-loss.ts),
          // for as long as the caller's deadline leaves room (deadline.ts).
          const reply = await repeatOnDatabaseLoss(ep.contract, req.data, () => ep.handle(req.data, ctx), {
            answerBy: answerBy(ctx),
            onRepeat: () => r.metrics.repeatedAfterDbLoss(ep.contract.subject),
          });
          const checked = ep.contract.reply.safeParse(reply);
          if (!checked.success) {
            r.log.error({ subject, requestId: ctx.requestId, issues: checked.error.issues }, 'handler reply broke its contract');
            throw AppError.internal();
          }
          msg.respond(encodeJson(checked.data));
          return 'ok';
        } catch (e) {
          const appErr = toAppError(e);
          const refused = isPermanentFailure(appErr);
          if (!refused) r.log.error({ err: e, subject, requestId: ctx.requestId }, 'handler failed');
          msg.respondError(serviceErrorCode(refused), appErr.code, encodeJson({ errors: appErr.errors }));
          return appErr.kind;
        }
      });
      r.inFlight.add(work);
      void work.finally(() => r.inFlight.delete(work));
    },
  });
}

/**
 * The Service API's numeric error code (`Nats-Service-Error-Code`, counted in `$SRV.STATS`): 400
 * when the request was refused, 500 when the service failed. It only marks the reply as an error;
 * what went wrong is the body's kind and code, and the HTTP status is the gateway's choice.
 */
export function serviceErrorCode(refused: boolean): number {
  return refused ? 400 : 500;
}
