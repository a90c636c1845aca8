/**
 * The compliance attributes a player declares (docs/content.md, "Compliance"): `country` (an
 * assigned ISO 3166-1 alpha-2 code, either case, stored upper case) and `birth_year` (1900 to the
 * current year, moving only later), given at registration or with PATCH /players/me, shown on /players/me
 * to the player alone. Through the gateway against real Postgres, NATS and Redis.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { createGuest, loginBody, newEmail, register, registrationBody, STRONG_PASSWORD, type TestPlayer } from './support.js';

const THIS_YEAR = new Date().getUTCFullYear();

describe('compliance attributes: country and birth year', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ services: ['players', 'wallet', 'chests'], env: { GRANT_WAIT_MS: '3000' } });
  });
  afterAll(async () => stack?.close());

  const registerWith = (attributes: Record<string, unknown>, email = newEmail(), token?: string) => {
    const body = registrationBody(email);
    Object.assign(body.data.attributes, attributes);
    return stack.inject({ method: 'POST', url: '/api/v1/players/register', headers: jsonApiHeaders(stack.apiKey, token), payload: body });
  };
  const patchMe = (token: string, attributes: Record<string, unknown>) =>
    stack.inject({
      method: 'PATCH',
      url: '/api/v1/players/me',
      headers: jsonApiHeaders(stack.apiKey, token),
      payload: { data: { type: 'player', attributes } },
    });
  /** The caller's country and birth year as /players/me shows them. */
  const declared = async (token: string) => {
    const res = await stack.inject({ method: 'GET', url: '/api/v1/players/me', headers: jsonApiHeaders(stack.apiKey, token) });
    expect(res.statusCode, res.body).toBe(200);
    const { country, birth_year } = res.json().data.attributes;
    return { country, birth_year };
  };
  /** The errors of a 422 as code → pointer. */
  const pointers = (res: Parameters<typeof expectError>[0]) => expectError(res, 422).map((e) => [e.code, e.source?.pointer] as const);

  it('takes them at registration (country in either case, stored upper case) and shows them on /players/me only', async () => {
    const email = newEmail();
    const res = await registerWith({ country: 'be', birth_year: 1990 }, email);
    expect(res.statusCode, res.body).toBe(201);
    // The session document keeps the spec's attributes: nothing personal in a token response.
    expect(res.json().data.attributes).toEqual({ email, is_anonymous: false });
    const token = res.json().meta.access_token;
    expect(await declared(token)).toEqual({ country: 'BE', birth_year: 1990 });

    const plain = await register(stack);
    expect(await declared(plain.accessToken)).toEqual({ country: null, birth_year: null });
    // Another player sees neither: a friend request's answer shows the relation only.
    const friend = await stack.inject({
      method: 'POST',
      url: '/api/v1/players/me/friends',
      headers: jsonApiHeaders(stack.apiKey, plain.accessToken),
      payload: { data: { type: 'player', id: res.json().data.id } },
    });
    expect(friend.statusCode, friend.body).toBe(201);
    expect(friend.json().data.attributes).toEqual({ is_anonymous: false });
  });

  it('refuses unassigned codes and implausible years: 422 with source.pointer, every bad member at once, nothing created', async () => {
    const bad: [Record<string, unknown>, string, string][] = [
      [{ country: 'XX' }, 'country_invalid', '/data/attributes/country'],
      [{ country: 'UK' }, 'country_invalid', '/data/attributes/country'],
      [{ country: 'EU' }, 'country_invalid', '/data/attributes/country'],
      [{ birth_year: THIS_YEAR + 1 }, 'birth_year_invalid', '/data/attributes/birth_year'],
    ];
    for (const [attributes, code, pointer] of bad) {
      expect(pointers(await registerWith(attributes)), JSON.stringify(attributes)).toEqual([[code, pointer]]);
    }
    // Shapes the gateway refuses before the players service is asked.
    const shapes: [Record<string, unknown>, string][] = [
      [{ country: 'DEU' }, '/data/attributes/country'],
      [{ country: ' DE' }, '/data/attributes/country'],
      [{ country: '' }, '/data/attributes/country'],
      [{ country: 49 }, '/data/attributes/country'],
      [{ country: null }, '/data/attributes/country'],
      [{ birth_year: 1899 }, '/data/attributes/birth_year'],
      [{ birth_year: '1990' }, '/data/attributes/birth_year'],
      [{ birth_year: 1990.5 }, '/data/attributes/birth_year'],
      [{ birth_year: null }, '/data/attributes/birth_year'],
    ];
    for (const [attributes, pointer] of shapes) {
      expect(
        pointers(await registerWith(attributes)).map(([, p]) => p),
        JSON.stringify(attributes),
      ).toEqual([pointer]);
    }
    // The form rules and the attributes are reported together.
    const email = newEmail();
    const all = registrationBody(email, 'short');
    Object.assign(all.data.attributes, { country: 'ZZ', birth_year: THIS_YEAR + 5 });
    const res = await stack.inject({ method: 'POST', url: '/api/v1/players/register', headers: jsonApiHeaders(stack.apiKey), payload: all });
    expect(pointers(res)).toEqual(
      expect.arrayContaining([
        ['password_too_short', '/data/attributes/password'],
        ['country_invalid', '/data/attributes/country'],
        ['birth_year_invalid', '/data/attributes/birth_year'],
      ]),
    );
    const login = await stack.inject({
      method: 'POST',
      url: '/api/v1/players/login',
      headers: jsonApiHeaders(stack.apiKey),
      payload: loginBody(email, STRONG_PASSWORD),
    });
    expect(login.statusCode).toBe(401);
    // Accepted edge cases: Kosovo's user-assigned XK, the current year, 1900.
    for (const attributes of [{ country: 'xk' }, { birth_year: THIS_YEAR }, { birth_year: 1900 }]) {
      expect((await registerWith(attributes)).statusCode, JSON.stringify(attributes)).toBe(201);
    }
  });

  it('PATCH /players/me: the first country is free, then one change per cooldown; a birth year moves later, never earlier (403 birth_year_locked)', async () => {
    const p = await register(stack);
    const set = await patchMe(p.accessToken, { country: 'fr' });
    expect(set.statusCode, set.body).toBe(200);
    expectJsonApi(set.json());
    expect(set.json().data.attributes).toMatchObject({ country: 'FR', birth_year: null, privacy: 'public' });
    expect((await patchMe(p.accessToken, { country: 'IT', birth_year: 2001, privacy: 'friends' })).json().data.attributes).toMatchObject({
      country: 'IT',
      birth_year: 2001,
      privacy: 'friends',
    });
    // The same values again are fine (a client may resend the whole form).
    expect((await patchMe(p.accessToken, { birth_year: 2001, country: 'it' })).statusCode).toBe(200);
    const [locked] = expectError(await patchMe(p.accessToken, { birth_year: 1980, privacy: 'private' }), 403, 'birth_year_locked');
    expect(locked!.source).toEqual({ pointer: '/data/attributes/birth_year' });
    // Refused as a whole: the privacy of that request was not applied either.
    expect(
      (await stack.inject({ method: 'GET', url: '/api/v1/players/me', headers: jsonApiHeaders(stack.apiKey, p.accessToken) })).json().data.attributes
        .privacy,
    ).toBe('friends');
    // Later (younger) is allowed.
    expect((await patchMe(p.accessToken, { birth_year: 2004 })).statusCode).toBe(200);
    // FR → IT started the cooldown: IT → ES waits for it, the moment in meta.retry_after.
    const before = Date.now();
    const [soon] = expectError(await patchMe(p.accessToken, { country: 'ES' }), 403, 'country_change_too_soon');
    expect(soon!.source).toEqual({ pointer: '/data/attributes/country' });
    const retryAfter = Date.parse((soon as unknown as { meta: { retry_after: string } }).meta.retry_after);
    expect(retryAfter).toBeGreaterThan(before + 29.9 * 86_400_000);
    expect(retryAfter).toBeLessThan(Date.now() + 30 * 86_400_000 + 1000);
    expect(await declared(p.accessToken)).toEqual({ country: 'IT', birth_year: 2004 });

    expect(pointers(await patchMe(p.accessToken, {}))).toEqual([[expect.any(String), '/data/attributes']]);
    expect(pointers(await patchMe(p.accessToken, { country: 'QQ' }))).toEqual([['country_invalid', '/data/attributes/country']]);
    expect(pointers(await patchMe(p.accessToken, { birth_year: 1850 })).map(([, ptr]) => ptr)).toEqual(['/data/attributes/birth_year']);
    expect(pointers(await patchMe(p.accessToken, { email: 'x@example.com' })).map(([, ptr]) => ptr)).toEqual(['/data/attributes']);
    expect(await declared(p.accessToken)).toEqual({ country: 'IT', birth_year: 2004 });
  });

  it('a country declared in a blocked region is locked (403 country_locked); the cooldown passes', async () => {
    // The demo content blocks BE and NL.
    const be = await registerWith({ country: 'BE', birth_year: 1990 });
    expect(be.statusCode, be.body).toBe(201);
    const token = be.json().meta.access_token as string;
    const [locked] = expectError(await patchMe(token, { country: 'DE' }), 403, 'country_locked');
    expect(locked!.source).toEqual({ pointer: '/data/attributes/country' });
    expect(await declared(token)).toEqual({ country: 'BE', birth_year: 1990 });

    // Moving INTO a blocked region is allowed (and locks it); after the cooldown a change is allowed again.
    const p = await register(stack);
    expect((await patchMe(p.accessToken, { country: 'DE' })).statusCode).toBe(200);
    expect((await patchMe(p.accessToken, { country: 'FR' })).statusCode).toBe(200);
    expectError(await patchMe(p.accessToken, { country: 'IT' }), 403, 'country_change_too_soon');
    await sql(stack, "UPDATE players.players SET country_changed_at = now() - interval '31 days' WHERE id = $1", [p.id]);
    expect((await patchMe(p.accessToken, { country: 'NL' })).statusCode).toBe(200);
    expectError(await patchMe(p.accessToken, { country: 'DE' }), 403, 'country_locked');
  });

  it('a guest declares them too; registering may move its birth year only later (earlier is 403) and may give a new country', async () => {
    const guest: TestPlayer = await createGuest(stack);
    expect((await patchMe(guest.accessToken, { country: 'PL', birth_year: 2008 })).statusCode).toBe(200);
    const email = newEmail('upgrade');
    expectError(await registerWith({ birth_year: 1990 }, email, guest.accessToken), 403, 'birth_year_locked');
    const upgraded = await registerWith({ country: 'cz' }, email, guest.accessToken);
    expect(upgraded.statusCode, upgraded.body).toBe(201);
    expect(upgraded.json().data.id).toBe(guest.id);
    expect(await declared(upgraded.json().meta.access_token)).toEqual({ country: 'CZ', birth_year: 2008 });
  });

  it('a guest in a blocked region cannot leave it by registering (403 country_locked, nothing registered)', async () => {
    const guest: TestPlayer = await createGuest(stack);
    expect((await patchMe(guest.accessToken, { country: 'nl' })).statusCode).toBe(200);
    const email = newEmail('locked');
    expectError(await registerWith({ country: 'DE' }, email, guest.accessToken), 403, 'country_locked');
    const me = await stack.inject({ method: 'GET', url: '/api/v1/players/me', headers: jsonApiHeaders(stack.apiKey, guest.accessToken) });
    expect(me.json().data.attributes).toMatchObject({ country: 'NL', is_anonymous: true });
  });
});

/** One query on the stack's database. */
async function sql(stack: TestStack, text: string, params: unknown[]): Promise<void> {
  const client = new pg.Client({ connectionString: stack.env.DATABASE_URL });
  await client.connect();
  try {
    await client.query(text, params);
  } finally {
    await client.end();
  }
}
