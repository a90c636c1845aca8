#!/usr/bin/env bash
# npm run test:containers: a real tier of the suite with TEST_INFRA=containers. testcontainers
# starts Postgres, NATS (JetStream) and Redis in fresh containers of the local images
# (scripts/docker/build-images.sh builds them from Debian packages when missing; cached after)
# and removes them when the run ends. No image registry is needed: Ryuk (testcontainers' reaper,
# an image from Docker Hub) is off, vitest's global teardown removes the containers.
#   npm run test:containers                         # the default tier (below)
#   npm run test:containers -- services/chests/test  # other paths instead
# Settings: TEST_POSTGRES_IMAGE, TEST_NATS_IMAGE, TEST_REDIS_IMAGE (other images; then none is
# built), SKIP_IMAGE_BUILD=1.
set -euo pipefail
cd "$(dirname "$0")/../.."

TIER=(test/containers packages/shared/test services/wallet/test services/collections/test services/players/test)

command -v docker >/dev/null || { echo "test:containers: docker is not installed (apt-get install docker.io)" >&2; exit 1; }
docker info >/dev/null 2>&1 || { echo "test:containers: the Docker engine does not answer (start dockerd)" >&2; exit 1; }

if [ -z "${TEST_POSTGRES_IMAGE:-}${TEST_NATS_IMAGE:-}${TEST_REDIS_IMAGE:-}" ] && [ "${SKIP_IMAGE_BUILD:-0}" != 1 ]; then
  bash scripts/docker/build-images.sh
fi

export TEST_INFRA=containers
export TESTCONTAINERS_RYUK_DISABLED="${TESTCONTAINERS_RYUK_DISABLED:-true}"
export TEST_POSTGRES_IMAGE="${TEST_POSTGRES_IMAGE:-local/postgres:15}"
export TEST_NATS_IMAGE="${TEST_NATS_IMAGE:-local/nats:2}"
export TEST_REDIS_IMAGE="${TEST_REDIS_IMAGE:-local/redis:7}"

if [ $# -gt 0 ]; then paths=("$@"); else paths=("${TIER[@]}"); fi
echo "test:containers: TEST_INFRA=containers with $TEST_POSTGRES_IMAGE, $TEST_NATS_IMAGE, $TEST_REDIS_IMAGE: ${paths[*]}"
labelled() { docker ps -aq --no-trunc --filter label=org.testcontainers=true | sort; }
before=$(labelled)
start=$SECONDS
status=0
npx vitest run "${paths[@]}" || status=$?
# Without Ryuk, a run that died before its teardown leaves its containers: remove those this run made.
left=$(comm -13 <(echo "$before") <(labelled) | tr '\n' ' ')
if [ -n "${left// /}" ]; then
  echo "test:containers: removing containers this run left behind: $left"
  # shellcheck disable=SC2086
  docker rm -f $left >/dev/null || true
fi
echo "test:containers: $([ "$status" -eq 0 ] && echo passed || echo "FAILED (exit $status)") in $((SECONDS - start)) s"
exit "$status"
