import type { Logger } from 'pino';
import type { AppliedNotices } from './applied-notices.js';
import type { OutboxMessage, OutboxRelay } from './outbox.js';

/** What a request that committed durable messages needs to publish them and wait for them. */
export interface ReadYourWritesDeps {
  notices: AppliedNotices;
  relay: OutboxRelay;
  log: Logger;
}

/**
 * The read-your-writes step of a saga, after its transaction committed `messages` to the outbox
 * (each enqueued with `notify: notices.subject`): waits for `durable` to apply `ids` (default: every
 * message), publishes the messages at once from memory, and resolves after at most `timeoutMs`
 * with the ids applied in time and each consumer's notice. The wait is registered before the
 * publish, so no notice is missed (the relay leaves rows this fresh to the request that wrote
 * them). A failed publish is left to the relay: the messages are durable either way, and the
 * caller answers without the confirmation.
 */
export async function publishAndAwait(
  deps: ReadYourWritesDeps,
  messages: OutboxMessage[],
  wait: { durable: string; timeoutMs: number; ids?: string[] },
): Promise<Map<string, unknown>> {
  const [seen] = await publishAndAwaitEach(deps, messages, [{ durable: wait.durable, ids: wait.ids ?? messages.map((m) => m.id) }], wait.timeoutMs);
  return seen!;
}

/**
 * `publishAndAwait` for messages that several consumers apply (one durable each, with the ids it
 * applies): every wait registered before the publish, all waited for at once under the one bound
 * `timeoutMs`, so the answer waits for the slowest consumer, never for their sum. Resolves with
 * the ids each consumer applied in time, in the order of `waits`.
 */
export async function publishAndAwaitEach(
  deps: ReadYourWritesDeps,
  messages: OutboxMessage[],
  waits: { durable: string; ids: string[] }[],
  timeoutMs: number,
): Promise<Map<string, unknown>[]> {
  const applied = waits.map((w) => deps.notices.expect(w.durable, w.ids));
  await deps.relay
    .publishNow(messages)
    .catch((err) => deps.log.warn({ err: String(err), messages: messages.length }, 'messages not published yet; the outbox relay will publish them'));
  return Promise.all(applied.map((a) => a.done(timeoutMs)));
}
