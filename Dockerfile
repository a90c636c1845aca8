# syntax=docker/dockerfile:1
# One image for all seven services. The command picks the service:
#   node services/<players|wallet|chests|collections|egress|store|gateway>/dist/main.js
# (docker-compose.yml sets it per container), or the admin command line and grants keeper:
#   node tools/admin/dist/main.js <command>
# Build: docker build -t collectible-chests .

ARG NODE_IMAGE=node:22-bookworm-slim

# 1. Dependencies, from the lockfile only (cached until a package.json or the lockfile changes).
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
# Compilers only for native addons without a prebuilt binary for this platform (argon2 ships them).
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
COPY packages/shared/package.json packages/shared/
COPY packages/client/package.json packages/client/
COPY services/gateway/package.json services/gateway/
COPY services/players/package.json services/players/
COPY services/wallet/package.json services/wallet/
COPY services/chests/package.json services/chests/
COPY services/collections/package.json services/collections/
COPY services/egress/package.json services/egress/
COPY services/store/package.json services/store/
COPY tools/admin/package.json tools/admin/
RUN npm ci --no-audit --no-fund

# 2. TypeScript to JavaScript (src/ -> dist/ per workspace), then drop dev dependencies and sources.
FROM deps AS build
COPY tsconfig.base.json tsconfig.build.json ./
COPY packages/shared packages/shared
COPY packages/client packages/client
COPY services services
COPY tools tools
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf packages/*/src services/*/src tools/*/src packages/*/test services/*/test tools/*/test \
 && find packages services tools -name '*.map' -delete -o -name '*.tsbuildinfo' -delete -o -name 'tsconfig*.json' -delete

# 3. Runtime: compiled code, SQL migrations, content files, the store's pinned Apple root
# certificate (services/store/assets) and production dependencies only.
FROM ${NODE_IMAGE} AS runtime
# NODE_ENV=production: every process refuses to start without its secrets (README, NODE_ENV).
# METRICS_PORT: the gateway's /metrics on a port of its own, never on the API port.
ENV NODE_ENV=production \
    HEALTH_PORT=8081 \
    METRICS_PORT=9464
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json /app/package-lock.json ./
COPY --from=build --chown=root:root /app/node_modules node_modules
COPY --from=build --chown=root:root /app/packages packages
COPY --from=build --chown=root:root /app/services services
COPY --from=build --chown=root:root /app/tools tools
# Files stay owned by root and read-only for the service user.
USER node
EXPOSE 3000 8081 9464
# Services answer /readyz on HEALTH_PORT; the gateway container sets HEALTHCHECK_URL to its own /readyz.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.HEALTHCHECK_URL || `http://127.0.0.1:${process.env.HEALTH_PORT || 8081}/readyz`, { signal: AbortSignal.timeout(2500) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "services/gateway/dist/main.js"]
