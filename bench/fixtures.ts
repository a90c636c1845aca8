/**
 * Prepares the benchmark's data through the public API (and the admin command for the bench's
 * own app): players with tokens, coins, chests and collections. Every step prints progress.
 */
import { spawn } from 'node:child_process';
import { BENCH_CHEST_PRICE, HOARD_CHEST, INVENTORY_CAPACITY, TEN_CHEST } from './content.js';
import { ROOT } from './stack-process.js';

export const JSONAPI = 'application/vnd.api+json';
/** A wooden chest's price in coins (default content), and the largest credit coins allow. */
const WOODEN_PRICE = 500;
const MAX_COINS_CREDIT = 1_000_000;
/** The password every bench player registers with. */
export const PASSWORD = 'Bench!pass1';

export type Log = (line: string) => void;

export interface Player {
  id: string;
  token: string;
  /** Unopened chests the bench knows of (the starter chest, then purchases in order). */
  chests: string[];
}

/** A thin client of the gateway: throws on any non-2xx with the status and the body's start. */
export class Api {
  constructor(
    readonly base: string,
    readonly apiKey: string,
  ) {}

  headers(token?: string, contentType?: string): Record<string, string> {
    const h: Record<string, string> = { apikey: this.apiKey, accept: JSONAPI };
    if (token) h.authorization = `Bearer ${token}`;
    if (contentType) h['content-type'] = contentType;
    return h;
  }

  /** Answers the parsed JSON body as `T`: the shape the caller reads (the bench validates nothing). */
  async call<T = unknown>(method: string, path: string, opts: { body?: unknown; token?: string; json?: boolean } = {}): Promise<T> {
    const contentType = opts.body === undefined ? undefined : opts.json ? 'application/json' : JSONAPI;
    const res = await fetch(this.base + path, {
      method,
      headers: this.headers(opts.token, contentType),
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} → ${res.status}: ${text.slice(0, 300)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }
}

/** A JSON:API list as the bench reads it: ids and some attributes. */
export type Listed<A> = { data: { id: string; attributes: A }[] };

/** A registration's answer as the bench reads it. */
type Registered = { data: { id: string }; meta: { access_token: string; welcome_bonus: { starter_chest: string } } };

/** The JSON:API body of a registration. */
export const registrationBody = (email: string) => ({
  data: { type: 'player', attributes: { email, password: PASSWORD, password_confirmation: PASSWORD }, relationships: {} },
});

/** The JSON:API body of a purchase in coins. */
export const purchaseBody = (quantity: number) => ({ data: { type: 'purchase', attributes: { currency: 'coins', quantity } } });

/**
 * Creates the bench's own app with `npm run admin -- create-app --content <file> --json` (the
 * operator's path; it waits until wallet, chests and collections applied the content).
 */
export async function createApp(
  env: Record<string, string>,
  name: string,
  contentFile: string,
  log: Log,
): Promise<{ appId: string; publishableKey: string }> {
  log(`creating the bench app "${name}" (npm run admin -- create-app --content ${contentFile}) ...`);
  const args = [
    '--import',
    'tsx',
    '--conditions=development',
    'tools/admin/src/main.ts',
    'create-app',
    '--name',
    name,
    '--content',
    contentFile,
    '--json',
    '--wait',
    '60',
  ];
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`admin create-app failed (exit ${code}):\n${err}${out}`);
  const app = JSON.parse(out) as { appId: string; publishableKey: string; services: { service: string; status: string }[] };
  log(`bench app ${app.appId}: content applied by ${app.services.map((s) => `${s.service} (${s.status})`).join(', ')}`);
  return app;
}

/** Runs `fn` over `items` with at most `n` at a time; the first failure stops the rest. */
export async function inParallel<T, R>(n: number, items: T[], fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  let failed: unknown;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length && failed === undefined) {
        const i = next++;
        try {
          results[i] = await fn(items[i]!, i);
        } catch (err) {
          failed ??= err;
        }
      }
    }),
  );
  if (failed !== undefined) throw failed;
  return results;
}

/** Prints a progress line at most every 2 s (and always the last one). */
export function progress(log: Log, what: string, total: number) {
  let done = 0;
  let last = 0;
  return (n = 1) => {
    done += n;
    if (done >= total || Date.now() - last > 2000) {
      last = Date.now();
      log(`prepared ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')} ${what}`);
    }
  };
}

/**
 * The data the scenarios need, prepared on first use (and only for the scenarios that run).
 * Players are registered with unique emails; purchases go 10 at a time, as the API allows.
 */
export class Fixtures {
  private registered = 0;
  private cache = new Map<string, Promise<unknown>>();

  constructor(
    readonly api: Api,
    readonly runId: string,
    private readonly log: Log,
  ) {}

  private once<T>(key: string, make: () => Promise<T>): Promise<T> {
    let p = this.cache.get(key) as Promise<T> | undefined;
    if (!p) {
      p = make();
      this.cache.set(key, p);
    }
    return p;
  }

  /** A unique email for this run (registrations of the scenario use their own counter). */
  email(kind: string): string {
    return `bench-${this.runId}-${kind}-${++this.registered}@example.com`;
  }

  /** Catalog chest type ids by name, and the coins currency id. */
  catalog(): Promise<{ chestIds: Map<string, string>; coinsId: string }> {
    return this.once('catalog', async () => {
      const chests = await this.api.call<Listed<{ name: string }>>('GET', '/api/v1/chests?page[limit]=100');
      const chestIds = new Map<string, string>(chests.data.map((c) => [c.attributes.name, c.id]));
      const currencies = await this.api.call<Listed<{ code: string }>>('GET', '/api/v1/currencies');
      const coins = currencies.data.find((c) => c.attributes.code === 'coins');
      if (!coins) throw new Error('the bench app has no coins currency');
      return { chestIds, coinsId: coins.id };
    });
  }

  async chestTypeId(name: string): Promise<string> {
    const id = (await this.catalog()).chestIds.get(name);
    if (!id) throw new Error(`the catalog has no "${name}"`);
    return id;
  }

  async register(kind: string): Promise<Player> {
    const reg = await this.api.call<Registered>('POST', '/api/v1/players/register', { body: registrationBody(this.email(kind)) });
    return { id: reg.data.id, token: reg.meta.access_token, chests: [reg.meta.welcome_bonus.starter_chest] };
  }

  async credit(p: Player, coins: number): Promise<void> {
    const { coinsId } = await this.catalog();
    for (let left = coins; left > 0; left -= MAX_COINS_CREDIT) {
      await this.api.call('POST', `/api/v1/currencies/${coinsId}/credit`, {
        body: { amount: String(Math.min(left, MAX_COINS_CREDIT)) },
        token: p.token,
        json: true,
      });
    }
  }

  /** Buys `count` chests of a catalog type, 10 per purchase; `tick` hears of each purchase's chests. */
  async buy(p: Player, chestName: string, count: number, tick?: (n: number) => void): Promise<void> {
    const typeId = await this.chestTypeId(chestName);
    for (let left = count; left > 0;) {
      const quantity = Math.min(10, left);
      const res = await this.api.call<{ data: { id: string }[] }>('POST', `/api/v1/chests/${typeId}/purchase`, {
        body: purchaseBody(quantity),
        token: p.token,
      });
      for (const c of res.data) p.chests.push(c.id);
      left -= quantity;
      tick?.(quantity);
    }
  }

  /** Opens one chest; answers the collectible ids it gave. */
  async open(p: Player, chestId: string): Promise<string[]> {
    const res = await this.api.call<{ data: { collectibles: { id: string }[] } }>('GET', `/api/v1/chests/${chestId}/open`, { token: p.token });
    return res.data.collectibles.map((c) => c.id);
  }

  /** A player holding `n` unopened wooden chests (the starter chest and n-1 bought). */
  inventoryPlayer(n: number): Promise<Player> {
    return this.once(`inventory${n}`, async () => {
      if (n > INVENTORY_CAPACITY) throw new Error(`${n} chests exceed the bench capacity ${INVENTORY_CAPACITY}`);
      const p = await this.register(`inv${n}`);
      await this.credit(p, (n - 1) * WOODEN_PRICE);
      await this.buy(p, 'Wooden Chest', n - 1, progress(this.log, `chests for the ${n}-chest inventory`, n - 1));
      return p;
    });
  }

  /**
   * A player whose collection holds `items` copies (10 or a multiple of 100): one Bench Ten
   * opening, or `items / 100` Bench Hoard openings. Resolves once the collection shows them all.
   */
  collector(items: number): Promise<{ player: Player; owned: string }> {
    return this.once(`collector${items}`, async () => {
      const chest = items === TEN_CHEST.items ? TEN_CHEST : HOARD_CHEST;
      if (items % chest.items) throw new Error(`a collection of ${items} items cannot be made of ${chest.items}-item openings`);
      const openings = items / chest.items;
      const p = await this.register(`col${items}`);
      const starter = p.chests.shift()!;
      await this.credit(p, openings * BENCH_CHEST_PRICE);
      await this.buy(p, chest.name, openings);
      const tick = progress(this.log, `items in the ${items.toLocaleString('en-US')}-item collection`, items);
      const owned = await inParallel(4, p.chests.splice(0), async (chestId) => {
        const got = await this.open(p, chestId);
        tick(got.length);
        return got[0]!;
      });
      p.chests.push(starter);
      // Openings answer once collections applied the grant (bounded by GRANT_WAIT_MS): make sure.
      const deadline = Date.now() + 60_000;
      for (;;) {
        const col = await this.api.call<{ meta: { total_copies: number } }>('GET', '/api/v1/players/me/collection', { token: p.token });
        if (col.meta.total_copies >= items) break;
        if (Date.now() > deadline) throw new Error(`the ${items}-item collection shows ${col.meta.total_copies} copies after 60 s`);
        await new Promise((r) => setTimeout(r, 500));
      }
      return { player: p, owned: owned[0]! };
    });
  }

  /**
   * `count` players who may pay at the stores: adults with a declared country (the demo content's
   * CN rule pack refuses store payments to players who declared none).
   */
  storeBuyers(count: number): Promise<Player[]> {
    return this.once('store buyers', () =>
      inParallel(8, Array.from({ length: count }), async () => {
        const body = registrationBody(this.email('store'));
        Object.assign(body.data.attributes, { country: 'US', birth_year: 1990 });
        const reg = await this.api.call<Registered>('POST', '/api/v1/players/register', { body });
        return { id: reg.data.id, token: reg.meta.access_token, chests: [reg.meta.welcome_bonus.starter_chest] };
      }),
    );
  }

  /** `count` players of their own for the credit scenario (each connection credits its own wallet). */
  creditors(count: number): Promise<Player[]> {
    return this.once('creditors', () => inParallel(8, Array.from({ length: count }), () => this.register('credit')));
  }

  /**
   * `count` more players able to buy `perPlayer` wooden chests each, one at a time: coins for
   * them, and the room (capacity less the starter chest).
   */
  async addPurchasers(count: number, perPlayer: number): Promise<Player[]> {
    if (perPlayer >= INVENTORY_CAPACITY) throw new Error(`${perPlayer} purchases exceed the bench capacity ${INVENTORY_CAPACITY}`);
    const tick = progress(this.log, `purchase players (${perPlayer} purchases each)`, count);
    return inParallel(8, Array.from({ length: count }), async () => {
      const p = await this.register('buy');
      await this.credit(p, perPlayer * WOODEN_PRICE);
      tick();
      return p;
    });
  }

  /** `count` more players holding `perPlayer` fresh chests each (the starter chest and the rest bought). */
  async addOpeners(count: number, perPlayer: number): Promise<Player[]> {
    const tick = progress(this.log, `chests to open (${count} players)`, count * perPlayer);
    return inParallel(12, Array.from({ length: count }), async () => {
      const p = await this.register('open');
      tick(1);
      await this.credit(p, (perPlayer - 1) * WOODEN_PRICE);
      await this.buy(p, 'Wooden Chest', perPlayer - 1, tick);
      return p;
    });
  }
}
