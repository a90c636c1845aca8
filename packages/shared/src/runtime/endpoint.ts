import type { CallContext } from '../contracts/context.js';
import type { ReplyOf, RequestOf, SubjectContract } from '../contracts/subject.js';

/** A request-reply handler bound to its contract. */
export interface Endpoint<C extends SubjectContract = SubjectContract> {
  contract: C;
  handle(req: RequestOf<C>, ctx: CallContext): Promise<ReplyOf<C>>;
}

/** Binds a handler to a contract; the runtime validates both directions around it. */
export function endpoint<C extends SubjectContract>(contract: C, handle: (req: RequestOf<C>, ctx: CallContext) => Promise<ReplyOf<C>>): Endpoint<C> {
  return { contract, handle };
}
