import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver got, as sent: the raw body and the headers. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  body: { id: string; type: string; created_at: string; app_id: string; data: Record<string, unknown> };
  /** When it arrived (ms). */
  at: number;
  /** The status it answers (after its delay, maybe once the sender gave up waiting). */
  answered: number;
}

/** How a path answers: a status, optionally after a delay (longer than the sender's timeout: a timeout). */
export type Behaviour = (req: { path: string; attempt: number; eventId: string }) => { status: number; delayMs?: number };

/**
 * A real local HTTP server that receives webhooks: every path answers 200 unless told otherwise
 * with `on(path, behaviour)`; `attempt` counts the requests for that path and event so far.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  private readonly behaviours = new Map<string, Behaviour>();
  /** Requests that arrived per path and event (counted on arrival: a slow answer is still one attempt). */
  private readonly arrivals = new Map<string, number>();
  private server: Server | undefined;
  private base = '';
  /** TCP connections accepted so far (a refused destination must never open one). */
  connections = 0;

  async start(port = 0): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const path = (req.url ?? '/').split('?')[0]!;
        let body: Received['body'];
        try {
          body = JSON.parse(raw) as Received['body'];
        } catch {
          res.writeHead(400).end('not json');
          return;
        }
        const key = `${path} ${body.id}`;
        const attempt = (this.arrivals.get(key) ?? 0) + 1;
        this.arrivals.set(key, attempt);
        const behaviour: Behaviour = this.behaviours.get(path) ?? (() => ({ status: 200 }));
        const { status, delayMs } = behaviour({ path, attempt, eventId: body.id });
        this.received.push({ path, headers: req.headers, raw, body, at: Date.now(), answered: status });
        const answer = () => {
          if (!res.destroyed) res.writeHead(status, { 'content-type': 'text/plain' }).end(status >= 300 ? `failing on purpose (${status})` : 'ok');
        };
        if (delayMs) setTimeout(answer, delayMs);
        else answer();
      });
    });
    this.server.on('connection', () => this.connections++);
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  url(path: string): string {
    return `${this.base}${path}`;
  }

  /** Its `host:port`, as WEBHOOK_ALLOW_TARGETS takes it (a loopback receiver is refused otherwise). */
  get target(): string {
    return this.base.replace(/^http:\/\//, '');
  }

  on(path: string, behaviour: Behaviour): void {
    this.behaviours.set(path, behaviour);
  }

  /** What a path received (every attempt), in arrival order. */
  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  /** The requests of a path it answered with 2xx. */
  accepted(path: string): Received[] {
    return this.at(path).filter((r) => r.answered >= 200 && r.answered < 300);
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
