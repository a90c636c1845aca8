import { fileURLToPath } from 'node:url';
import { AppliedNotices, OutboxRelay, type ServiceDefinition } from '@ccs/shared';
import { ensureDemoApp } from './apps/demo-app.js';
import { experienceConsumer } from './consumers/experience.js';
import type { PlayersConfig } from './config.js';
import { PasswordHasher } from './credentials/passwords.js';
import type { PlayersDeps } from './deps.js';
import { adminCreateAppEndpoint, adminLoadContentEndpoint } from './endpoints/admin.js';
import { adminListAppsEndpoint } from './endpoints/admin-list-apps.js';
import { adminListAuditEndpoint, adminListContentVersionsEndpoint, adminRecordAuditEndpoint } from './endpoints/admin-audit.js';
import { adminContentDiffEndpoint } from './endpoints/admin-content-diff.js';
import { adminRotateKeysEndpoint } from './endpoints/admin-rotate-keys.js';
import { adminStatsEndpoint } from './endpoints/admin-stats.js';
import { adminFindPlayerEndpoint } from './endpoints/admin-find-player.js';
import { supportDeskEndpoints } from './endpoints/admin-support.js';
import { complianceProfileEndpoint } from './endpoints/compliance-profile.js';
import { adminUpdateProfileEndpoint } from './endpoints/admin-update-profile.js';
import { createGuestEndpoint } from './endpoints/create-guest.js';
import { addFriendEndpoint, listFriendsEndpoint, removeFriendEndpoint } from './endpoints/friends.js';
import { inventoryAccessEndpoint } from './endpoints/inventory-access.js';
import { tradePartiesEndpoint } from './endpoints/trade-parties.js';
import { jwksEndpoint, resolveApiKeyEndpoint } from './endpoints/keys.js';
import { loginEndpoint } from './endpoints/login.js';
import { logoutEndpoint } from './endpoints/logout.js';
import { getMeEndpoint, updateMeEndpoint } from './endpoints/me.js';
import { refreshEndpoint } from './endpoints/refresh.js';
import { registerEndpoint } from './endpoints/register.js';
import { AccessTokenSigner } from './tokens/access-tokens.js';
import { loadKeyRing } from './tokens/signing-keys.js';
import { registrationKeysSweeper } from './workers/registration-keys-sweeper.js';

/**
 * The players service: apps and API keys, players, credentials and sessions, privacy, friends
 * and experience (from chest openings). Webhooks are the egress worker's (services/egress). On
 * start it loads (or creates) the signing key and seeds the demo app.
 */
export const playersService: ServiceDefinition<PlayersConfig> = {
  name: 'players',
  version: '0.1.0',
  schema: 'players',
  migrationsDir: fileURLToPath(new URL('../migrations', import.meta.url)),
  async build({ config, log, pool, nc, js }) {
    const keys = await loadKeyRing(pool, { privatePem: config.JWT_PRIVATE_KEY, publicPem: config.JWT_PUBLIC_KEY }, log);
    const demoCreated = await ensureDemoApp(pool, config.CHESTS_DEMO_API_KEY, log, config.CHESTS_DEMO_SECRET_KEY);
    const relay = new OutboxRelay(pool, js, config.NATS_PREFIX, log);
    // The demo app's content goes out now, as an admin create-app's does: a relay pass leaves rows
    // younger than 3 s to the request that wrote them, so the other services would get it late.
    if (demoCreated) await relay.flush().catch((err) => log.warn({ err: String(err) }, 'demo content publish deferred to the relay'));
    const d: PlayersDeps = {
      config,
      log,
      pool,
      nc,
      relay,
      notices: new AppliedNotices(nc, config.NATS_PREFIX),
      hasher: new PasswordHasher(
        { memoryKib: config.ARGON2_MEMORY_KIB, timeCost: config.ARGON2_TIME_COST },
        { concurrency: config.ARGON2_CONCURRENCY, depth: config.ARGON2_QUEUE_DEPTH, maxWaitMs: config.ARGON2_QUEUE_WAIT_MS },
      ),
      signer: new AccessTokenSigner(keys.active, { issuer: config.JWT_ISSUER, audience: config.JWT_AUDIENCE }),
      keys,
    };
    return {
      endpoints: [
        resolveApiKeyEndpoint(d),
        jwksEndpoint(d),
        registerEndpoint(d),
        loginEndpoint(d),
        refreshEndpoint(d),
        logoutEndpoint(d),
        createGuestEndpoint(d),
        getMeEndpoint(d),
        updateMeEndpoint(d),
        addFriendEndpoint(d),
        listFriendsEndpoint(d),
        removeFriendEndpoint(d),
        inventoryAccessEndpoint(d),
        tradePartiesEndpoint(d),
        complianceProfileEndpoint(d),
        adminCreateAppEndpoint(d),
        adminLoadContentEndpoint(d),
        adminRotateKeysEndpoint(d),
        adminRecordAuditEndpoint(d.pool),
        adminListAuditEndpoint(d.pool),
        adminListContentVersionsEndpoint(d.pool),
        adminContentDiffEndpoint(d.pool),
        adminListAppsEndpoint(d),
        adminStatsEndpoint(d),
        adminFindPlayerEndpoint(d),
        adminUpdateProfileEndpoint(d),
        ...supportDeskEndpoints(d),
      ],
      consumers: [experienceConsumer()],
      workers: [
        d.relay,
        { start: () => undefined, stop: async () => d.notices.close() },
        registrationKeysSweeper(pool, log, config.IDEMPOTENCY_KEY_TTL_HOURS),
      ],
    };
  },
};
