import { randomBytes } from 'node:crypto';
import { headers as natsHeaders, type NatsConnection, type Msg, type PublishOptions, type Subscription } from 'nats';
import { prefixed } from '../runtime/subjects.js';

const decoder = new TextDecoder();

/** Header of an applied notice carrying what the consumer decided (JSON), beside the message id in the body. */
export const NOTICE_HEADER = 'ccs-notice';

/** Whether a subject is one an `AppliedNotices` of this stack listens on (consumers publish only there). */
export function isNoticeSubject(prefix: string, subject: string): boolean {
  return subject.startsWith(prefixed(prefix, 'notify.')) && /^[A-Za-z0-9_.-]+$/.test(subject);
}

/** Publish options of an applied notice: its `notice` as a JSON header, or none. */
export function noticeOptions(notice: unknown): Partial<PublishOptions> | undefined {
  if (notice === undefined) return undefined;
  const h = natsHeaders();
  h.set(NOTICE_HEADER, JSON.stringify(notice));
  return { headers: h };
}

/** The notice a consumer sent with an applied message (undefined when none, or unreadable). */
function noticeOf(msg: Msg): unknown {
  const raw = msg.headers?.get(NOTICE_HEADER);
  if (!raw) return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

/**
 * Tells this process when consumers applied the durable messages it wrote, with ONE subscription
 * per process: a message enqueued with `notify: notices.subject` makes each consumer publish
 * `<subject>.<durable>` with the message id once applied, and with what it decided when the
 * consumer says (its `notice`, e.g. collections' duplicate conversions). A waiter registers before
 * the message can be published, then awaits it, bounded. (The alternative, a subscription per
 * message, costs two protocol round trips to the NATS server per message.)
 */
export class AppliedNotices {
  /** What to pass as `notify` to `enqueue`. */
  readonly subject: string;
  private readonly waiters = new Map<string, (notice: unknown) => void>();
  private readonly sub: Subscription;

  constructor(nc: NatsConnection, prefix: string) {
    this.subject = prefixed(prefix, `notify.${randomBytes(8).toString('hex')}`);
    const from = this.subject.length + 1;
    this.sub = nc.subscribe(`${this.subject}.>`, {
      callback: (_err, msg) => this.waiters.get(`${msg.subject.slice(from)} ${decoder.decode(msg.data)}`)?.(noticeOf(msg)),
    });
  }

  /**
   * Starts waiting until `durable` applied each of `messageIds`; call before they can be
   * published. `done` resolves with the ids applied in time, each with the consumer's notice
   * (undefined when it sent none).
   */
  expect(durable: string, messageIds: string[]): { done(timeoutMs: number): Promise<Map<string, unknown>> } {
    const seen = new Map<string, unknown>();
    let resolve!: () => void;
    const all = new Promise<void>((r) => (resolve = r));
    const keys = messageIds.map((id) => `${durable} ${id}`);
    messageIds.forEach((id, i) =>
      this.waiters.set(keys[i]!, (notice) => {
        seen.set(id, notice);
        this.waiters.delete(keys[i]!);
        if (seen.size === messageIds.length) resolve();
      }),
    );
    if (messageIds.length === 0) resolve();
    return {
      done: async (timeoutMs: number) => {
        let timer: NodeJS.Timeout | undefined;
        if (timeoutMs > 0) await Promise.race([all, new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
        clearTimeout(timer);
        for (const k of keys) this.waiters.delete(k);
        return seen;
      },
    };
  }

  close(): void {
    this.sub.unsubscribe();
  }
}
