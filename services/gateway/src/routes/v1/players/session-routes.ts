import type { FastifyInstance, FastifyRequest } from 'fastify';
import { applyFieldset, CreateGuest, LoginPlayer, LogoutPlayer, RefreshSession, RegisterPlayer, type Session } from '@ccs/shared';
import { z } from 'zod';
import { callContext, idempotencyKeyOf, jsonApiQuery, parseBody, sendDocument } from '../../../lib/http.js';
import { LoginBody, LogoutBody, RefreshBody, RegisterBody } from './bodies.js';
import { playerChests } from './player-chests.js';
import { SESSION_PLAYER_FIELDS, sessionMeta, sessionPlayerResource } from '../../../resources/players.js';
import { documented, NO_QUERY } from '../../../openapi/route-doc.js';
import { linkBase } from '../resource-links.js';
import * as docs from '../../../openapi/operations/players.js';

const credentialRoute = { authLimited: true, bodyType: 'jsonapi' as const };
const SESSION_QUERY = { fields: { player: SESSION_PLAYER_FIELDS } };

/**
 * A session document: the player (with the requested fieldset) and its tokens in meta. A login or
 * refresh (no grants) lists the player's unopened chests, as /players/me does; a chests service
 * that cannot answer does not fail the sign-in (the relationship says so).
 */
async function sessionDocument(request: FastifyRequest, s: Session) {
  const { fields } = jsonApiQuery(request, SESSION_QUERY);
  const chests = s.grants ? undefined : await playerChests(request, s.player.id, false);
  return { data: applyFieldset(sessionPlayerResource(s, linkBase(request), chests), fields), included: [], meta: sessionMeta(s) };
}

const SessionClaims = z.object({ sid: z.string().uuid() });

/** The access token's session id (`sid`), which logout revokes. */
function sessionIdOf(request: FastifyRequest): string | undefined {
  const claims = SessionClaims.safeParse(request.user);
  return claims.success ? claims.data.sid : undefined;
}

/**
 * Registration, login (also at the spec's unprefixed /players/login), refresh and guest creation
 * (app scope; registration with a guest's token upgrades the guest). Credential routes carry the
 * tighter rate limit; register and login the longer CREDENTIALS_TIMEOUT_MS. Registration takes an
 * optional Idempotency-Key.
 */
export async function sessionRoutes(app: FastifyInstance) {
  // Register and login wait in players' bounded password queue: their own bound covers it.
  const credentialsTimeout = { timeoutMs: app.gatewayConfig.CREDENTIALS_TIMEOUT_MS };
  const registerDoc = documented(docs.register, { query: SESSION_QUERY, body: { schema: RegisterBody, required: true } });
  app.post('/api/v1/players/register', { config: { ...credentialRoute, openapi: registerDoc } }, async (request, reply) => {
    jsonApiQuery(request, SESSION_QUERY);
    const body = parseBody(RegisterBody, request.body);
    const { email, password, password_confirmation, country, birth_year } = body.data.attributes;
    const idempotencyKey = idempotencyKeyOf(request);
    const session = await app.bus.request(
      RegisterPlayer,
      { email, password, passwordConfirmation: password_confirmation, country, birthYear: birth_year, idempotencyKey },
      callContext(request),
      credentialsTimeout,
    );
    if (session.replayed) reply.header('idempotent-replayed', 'true');
    return sendDocument(reply, 201, await sessionDocument(request, session));
  });

  const login = async (request: FastifyRequest) => {
    jsonApiQuery(request, SESSION_QUERY);
    const { email, password } = parseBody(LoginBody, request.body).data.attributes;
    return await sessionDocument(request, await app.bus.request(LoginPlayer, { email, password }, callContext(request), credentialsTimeout));
  };
  const loginBody = { query: SESSION_QUERY, body: { schema: LoginBody, required: true } };
  app.post('/api/v1/players/login', { config: { ...credentialRoute, openapi: documented(docs.login, loginBody) } }, async (request, reply) =>
    sendDocument(reply, 200, await login(request)),
  );
  app.post(
    '/players/login',
    { config: { ...credentialRoute, tenantScoped: true, openapi: documented(docs.loginAlias, loginBody) } },
    async (request, reply) => sendDocument(reply, 200, await login(request)),
  );

  const refreshDoc = documented(docs.refresh, { query: SESSION_QUERY, body: { schema: RefreshBody, required: true } });
  app.post('/api/v1/players/refresh', { config: { ...credentialRoute, openapi: refreshDoc } }, async (request, reply) => {
    jsonApiQuery(request, SESSION_QUERY);
    const { refresh_token } = parseBody(RefreshBody, request.body).data.attributes;
    const session = await app.bus.request(RefreshSession, { refreshToken: refresh_token }, callContext(request));
    return sendDocument(reply, 200, await sessionDocument(request, session));
  });

  // No body needed: see allowEmptyJsonApiBody in ../players.ts.
  app.post(
    '/api/v1/players/anonymous',
    { config: { authLimited: true, openapi: documented(docs.createGuest, { query: SESSION_QUERY }) } },
    async (request, reply) => {
      jsonApiQuery(request, SESSION_QUERY);
      const session = await app.bus.request(CreateGuest, { idempotencyKey: idempotencyKeyOf(request) }, callContext(request));
      if (session.replayed) reply.header('idempotent-replayed', 'true');
      return sendDocument(reply, 201, await sessionDocument(request, session));
    },
  );
}

/** Logout (player scope): revokes the session of the access token, and a refresh token when sent. */
export async function logoutRoutes(app: FastifyInstance) {
  const logoutDoc = documented(docs.logout, { query: NO_QUERY, body: { schema: LogoutBody, required: false } });
  app.post('/api/v1/players/logout', { config: { openapi: logoutDoc } }, async (request, reply) => {
    jsonApiQuery(request, NO_QUERY);
    const body = request.body === undefined ? undefined : parseBody(LogoutBody, request.body);
    const refreshToken = body?.data.attributes.refresh_token;
    await app.bus.request(LogoutPlayer, { sessionId: sessionIdOf(request), refreshToken }, callContext(request));
    return reply.code(204).send();
  });
}
