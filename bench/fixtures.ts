/** Prepares benchmark data through the public API: players with tokens, coins and many chests. */
const JSONAPI = 'application/vnd.api+json';

export interface BenchPlayer {
  id: string;
  token: string;
  chests: string[];
}

async function call(base: string, apiKey: string, method: string, path: string, body?: unknown, token?: string, json = false) {
  const headers: Record<string, string> = { apikey: apiKey, accept: JSONAPI };
  if (body !== undefined) headers['content-type'] = json ? 'application/json' : JSONAPI;
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}

/** Registers `count` players, credits coins and buys wooden chests up to `chestsEach` each. */
export async function preparePlayers(base: string, apiKey: string, count: number, chestsEach: number, log: (s: string) => void) {
  const catalog = await call(base, apiKey, 'GET', '/api/v1/chests?filter[name]=Wooden%20Chest');
  const woodenId: string = catalog.data[0].id;
  const currencies = await call(base, apiKey, 'GET', '/api/v1/currencies');
  const coinsId: string = currencies.data.find((c: { attributes: { code: string } }) => c.attributes.code === 'coins').id;
  const players: BenchPlayer[] = [];
  for (let i = 0; i < count; i++) {
    const email = `bench-${Date.now()}-${i}@example.com`;
    const reg = await call(base, apiKey, 'POST', '/api/v1/players/register', {
      data: { type: 'player', attributes: { email, password: 'Bench!pass1', password_confirmation: 'Bench!pass1' }, relationships: {} },
    });
    const p: BenchPlayer = { id: reg.data.id, token: reg.meta.access_token, chests: [reg.meta.welcome_bonus.starter_chest] };
    await call(base, apiKey, 'POST', `/api/v1/currencies/${coinsId}/credit`, { amount: String(chestsEach * 500) }, p.token, true);
    for (let bought = 1; bought < chestsEach; ) {
      const quantity = Math.min(10, chestsEach - bought);
      const res = await call(base, apiKey, 'POST', `/api/v1/chests/${woodenId}/purchase`, { data: { type: 'purchase', attributes: { currency: 'coins', quantity } } }, p.token);
      for (const c of res.data) p.chests.push(c.id);
      bought += quantity;
    }
    players.push(p);
    log(`prepared player ${i + 1}/${count} with ${p.chests.length} chests`);
  }
  const collectibles = await call(base, apiKey, 'GET', '/api/v1/collectibles?page[limit]=1');
  return { players, coinsId, woodenId, collectibleId: collectibles.data[0].id as string };
}
