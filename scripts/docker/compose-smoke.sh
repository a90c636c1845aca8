#!/usr/bin/env bash
# Smoke test of the compose stack's infrastructure from the local images: docker-compose.yml's
# postgres, nats and redis with scripts/docker/compose.local.yml (local/postgres:15, local/nats:2,
# local/redis:7), all healthy; then the seven services on the host (npm start) against them, until
# GET /readyz answers 200; then everything stops and the project's volumes are removed.
# The services' own image is not built: the Dockerfile's base (node:22-bookworm-slim) comes from a
# registry (docs/testing-containers.md). Ports (127.0.0.1): POSTGRES_PORT 25432, NATS_PORT 24222,
# REDIS_PORT 26379, the gateway's SMOKE_PORT 23000 and METRICS_PORT 29464.
# Uses `docker compose` (v2) when present, else Debian's docker-compose 1.29, which refuses the
# top-level `name:` of docker-compose.yml: it then reads a copy without that line.
set -euo pipefail
cd "$(dirname "$0")/../.."

started=$SECONDS
say() { printf '[compose %3ss] %s\n' "$((SECONDS - started))" "$*"; }
die() { printf '[compose] FAILED: %s\n' "$*" >&2; exit 1; }

export NATS_CONF=./deploy/nats/no-auth.conf
export POSTGRES_PORT=${POSTGRES_PORT:-25432} NATS_PORT=${NATS_PORT:-24222} REDIS_PORT=${REDIS_PORT:-26379}
port=${SMOKE_PORT:-23000}
project=ccs-smoke
tmp=$(mktemp -d)

if docker compose version >/dev/null 2>&1; then
  compose=(docker compose -p "$project" -f docker-compose.yml -f scripts/docker/compose.local.yml)
elif command -v docker-compose >/dev/null; then
  sed '/^name:/d' docker-compose.yml >"$tmp/docker-compose.yml"
  compose=(docker-compose --project-directory . -p "$project" -f "$tmp/docker-compose.yml" -f scripts/docker/compose.local.yml)
else
  die "neither docker compose nor docker-compose is installed (apt-get install docker-compose)"
fi

app=
cleanup() {
  # npm start runs in a process group of its own: Ctrl-C to all of it, as in a terminal; KILL after 30 s.
  if [ -n "$app" ] && kill -INT -- "-$app" 2>/dev/null; then
    for _ in $(seq 1 30); do kill -0 -- "-$app" 2>/dev/null || break; sleep 1; done
    kill -KILL -- "-$app" 2>/dev/null || true
  fi
  "${compose[@]}" down -v >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

bash scripts/docker/build-images.sh
say "$([ "${compose[0]}" = docker ] && echo "docker compose" || echo docker-compose) up -d postgres nats redis (local images)"
"${compose[@]}" up -d postgres nats redis
for i in $(seq 1 60); do
  healthy=$("${compose[@]}" ps -q | xargs docker inspect -f '{{.State.Health.Status}}' | grep -c '^healthy$' || true)
  [ "$healthy" -eq 3 ] && break
  sleep 1
done
[ "$healthy" -eq 3 ] || { "${compose[@]}" ps; die "the infrastructure was not healthy within 60 s"; }
say "postgres, nats and redis are healthy"

say "npm start against them (gateway on 127.0.0.1:$port)"
DATABASE_URL="postgres://postgres@127.0.0.1:$POSTGRES_PORT/chests" NATS_URL="nats://127.0.0.1:$NATS_PORT" REDIS_URL="redis://127.0.0.1:$REDIS_PORT" \
  PORT=$port METRICS_PORT=${METRICS_PORT:-29464} LOG_LEVEL=warn setsid npm start >"$tmp/start.log" 2>&1 &
app=$!
code=
for i in $(seq 1 120); do
  code=$(curl -s -o "$tmp/readyz" -w '%{http_code}' "http://127.0.0.1:$port/readyz" || true)
  [ "$code" = 200 ] && break
  kill -0 "$app" 2>/dev/null || { tail -30 "$tmp/start.log" >&2; die "npm start exited"; }
  sleep 1
done
[ "$code" = 200 ] || { tail -30 "$tmp/start.log" >&2; die "GET /readyz answered ${code:-nothing} within 120 s"; }
say "GET /readyz: 200 $(head -c 300 "$tmp/readyz")"
say "passed; stopping npm start and the compose project"
