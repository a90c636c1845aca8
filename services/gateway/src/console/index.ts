import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import formbody from '@fastify/formbody';
import secureSession from '@fastify/secure-session';
import { auditRoutes } from './pages/audit.js';
import { bannersRoutes } from './pages/banners.js';
import { chestsRoutes } from './pages/chests.js';
import { contentRoutes } from './pages/content.js';
import { oddsLogRoutes } from './pages/odds-log.js';
import { overviewRoutes } from './pages/overview.js';
import { playersRoutes } from './pages/players.js';
import { signInRoutes } from './pages/sign-in.js';
import { storeRoutes } from './pages/store.js';
import { webhooksRoutes } from './pages/webhooks.js';
import { addSecurityHeaders, handleErrors, refuseCrossSitePosts } from './protections.js';
import { SignInThrottle } from './sign-in-throttle.js';
import { assetRoutes } from './vendor-assets.js';

/**
 * The studio console (docs/console.md): server-rendered pages at /console over the admin API,
 * with htmx for the parts that update in place and Chart.js for the charts, all served from the
 * gateway's own packages. Sign-in takes the app's secret key, kept only in an encrypted, HttpOnly,
 * SameSite=Strict session cookie (never in a URL or in script-readable storage); each page calls
 * the admin API in-process with it (admin-client.ts), so the numbers are the API's and every call
 * is audited. One file per page under pages/, each reading the API's documents as the generated
 * client schema types them.
 */

export interface ConsoleOptions {
  /** Where failed sign-ins are counted per address (shared by every gateway replica). */
  redis: Redis;
  redisPrefix: string;
  /** Failed sign-ins per address and minute before 429 (CONSOLE_SIGNIN_FAILURES_PER_MINUTE). */
  signInFailuresPerMinute: number;
  /** 32 bytes: the key that encrypts the session cookie (CONSOLE_SESSION_KEY). */
  sessionKey: Buffer;
  /** How long a sign-in lasts, in seconds. */
  sessionSeconds: number;
}

export async function consoleRoutes(app: FastifyInstance, opts: ConsoleOptions) {
  await app.register(formbody, { bodyLimit: 1024 * 1024 });
  await app.register(secureSession, {
    cookieName: 'ccs_console',
    key: opts.sessionKey,
    expiry: opts.sessionSeconds,
    cookie: { path: '/console', httpOnly: true, sameSite: 'strict', secure: 'auto', maxAge: opts.sessionSeconds },
  });
  addSecurityHeaders(app);
  refuseCrossSitePosts(app);
  handleErrors(app);
  assetRoutes(app);
  signInRoutes(app, new SignInThrottle(opts.redis, opts.redisPrefix, opts.signInFailuresPerMinute));
  overviewRoutes(app);
  playersRoutes(app);
  chestsRoutes(app);
  oddsLogRoutes(app);
  bannersRoutes(app);
  storeRoutes(app);
  contentRoutes(app);
  webhooksRoutes(app);
  auditRoutes(app);
}
