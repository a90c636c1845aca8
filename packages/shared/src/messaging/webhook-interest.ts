import type { Logger } from 'pino';
import { WEBHOOK_EVENT_TYPES, WebhookInterest, WebhooksChanged, type WebhookEventType } from '../contracts/domain-events.js';
import type { Bus } from '../runtime/bus.js';

interface Entry {
  types: Set<WebhookEventType>;
  until: number;
}

/**
 * Whether an app's webhooks take an event type, for a producer that writes a frequent event only
 * when someone listens (docs/webhooks.md, "Cost"). Answers are cached per app for `ttlMs`; egress (the webhook worker)
 * announces every change of an app's endpoints (WebhooksChanged), which clears that app's entry,
 * so a new endpoint gets its events within moments. When egress cannot answer, the answer is
 * yes (for a short while): an event too many costs only work, an event missing would be lost.
 */
export class WebhookInterestCache {
  private readonly entries = new Map<string, Entry>();
  private readonly asking = new Map<string, Promise<Set<WebhookEventType>>>();
  private readonly stopListening: () => void;

  /**
   * `lookup` answers an app's types when the cache does not: by default egress's
   * `egress.v1.webhook_interest`; egress itself passes its own table's answer.
   */
  constructor(
    private readonly bus: Bus,
    private readonly log: Logger,
    private readonly ttlMs = 60_000,
    private readonly failOpenMs = 5_000,
    private readonly lookup?: (appId: string) => Promise<readonly WebhookEventType[]>,
  ) {
    this.stopListening = bus.listen(WebhooksChanged, ({ appId }) => this.entries.delete(appId));
  }

  /** Whether the app's webhooks take any of `types` (see wants). */
  async wantsAny(appId: string, types: readonly WebhookEventType[], requestId: string): Promise<boolean> {
    for (const type of types) if (await this.wants(appId, type, requestId)) return true;
    return false;
  }

  /** Whether the app's webhooks take `type`; `requestId` (the request that asks) goes with a lookup, for the logs and traces. */
  async wants(appId: string, type: WebhookEventType, requestId: string): Promise<boolean> {
    const hit = this.entries.get(appId);
    if (hit && hit.until > Date.now()) return hit.types.has(type);
    let pending = this.asking.get(appId);
    if (!pending) {
      pending = this.ask(appId, requestId).finally(() => this.asking.delete(appId));
      this.asking.set(appId, pending);
    }
    return (await pending).has(type);
  }

  private async ask(appId: string, requestId: string): Promise<Set<WebhookEventType>> {
    try {
      const types = new Set(
        this.lookup
          ? await this.lookup(appId)
          : (await this.bus.request(WebhookInterest, { appId }, { requestId, appId }, { timeoutMs: 1000 })).types,
      );
      this.entries.set(appId, { types, until: Date.now() + this.ttlMs });
      return types;
    } catch (err) {
      this.log.warn({ appId, err: String(err) }, 'could not learn which webhook events the app takes; taking them all for a while');
      const all = new Set<WebhookEventType>(WEBHOOK_EVENT_TYPES);
      this.entries.set(appId, { types: all, until: Date.now() + this.failOpenMs });
      return all;
    }
  }

  stop(): void {
    this.stopListening();
  }
}
