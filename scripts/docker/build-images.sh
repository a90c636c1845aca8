#!/usr/bin/env bash
# Builds the infrastructure images the container tests (TEST_INFRA=containers, npm run
# test:containers) and scripts/docker/compose.local.yml use, from Debian packages only: no image
# registry is needed. Each image is a Debian 12 (bookworm) minbase root filesystem made by
# debootstrap, with Debian's server package installed in a chroot, imported with `docker import`:
#   local/postgres:15  Debian's PostgreSQL 15: a cluster made at build time (trust auth, user postgres,
#                      listen_addresses='*'); runs as postgres; POSTGRES_DB creates that database once
#   local/redis:7      Debian's Redis 7, protected mode off, listening on every interface
#   local/nats:2       Debian's nats-server 2 (entrypoint nats-server, command -js: JetStream on)
# An image that exists already is kept (docker image inspect), so a second run takes a second;
# REBUILD=1 builds them again (REBUILD_BASE=1 the debootstrap base too). Settings: DEBIAN_MIRROR (else the first bookworm mirror in
# /etc/apt/sources.list{,.d}), IMAGES (which to build: postgres redis nats), KEEP_WORKDIR=1.
# Needs root (debootstrap, chroot), a running Docker engine and debootstrap (installed with apt-get
# when missing).
set -euo pipefail

started=$SECONDS
say() { printf '[images %3ss] %s\n' "$((SECONDS - started))" "$*"; }
die() { printf '[images] FAILED: %s\n' "$*" >&2; exit 1; }

BASE_IMAGE=local/debian-minbase:bookworm
IMAGES=${IMAGES:-postgres redis nats}
declare -A TAG=([postgres]=local/postgres:15 [redis]=local/redis:7 [nats]=local/nats:2)
declare -A PACKAGES=([postgres]=postgresql-15 [redis]=redis-server [nats]=nats-server)

[ "$(id -u)" -eq 0 ] || die "run as root (debootstrap and chroot need it)"
command -v docker >/dev/null || die "docker is not installed (apt-get install docker.io)"
docker info >/dev/null 2>&1 || die "the Docker engine does not answer (start it: dockerd > /tmp/dockerd.log 2>&1 &)"

exists() { docker image inspect "$1" >/dev/null 2>&1; }

todo=()
for name in $IMAGES; do
  [ -n "${TAG[$name]:-}" ] || die "unknown image \"$name\" in IMAGES: use postgres, redis, nats"
  if exists "${TAG[$name]}" && [ "${REBUILD:-0}" != 1 ]; then say "${TAG[$name]} exists (REBUILD=1 rebuilds it)"; else todo+=("$name"); fi
done
if [ ${#todo[@]} -eq 0 ]; then say "all images present"; exit 0; fi

# The Debian mirror this machine's apt uses (deb822 .sources files or one-line sources.list).
mirror() {
  if [ -n "${DEBIAN_MIRROR:-}" ]; then echo "$DEBIAN_MIRROR"; return; fi
  local m
  m=$(awk '/^URIs:/ {u=$2} /^Suites:/ && / bookworm( |$)/ && u {print u; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [ -n "$m" ] || m=$(awk '$1=="deb" && $0 ~ / bookworm / {for (i=2;i<=NF;i++) if ($i ~ /^https?:/) {print $i; exit}}' /etc/apt/sources.list 2>/dev/null || true)
  echo "${m:-http://deb.debian.org/debian}"
}

work=$(mktemp -d /var/tmp/ccs-images.XXXXXX)
mounted=()
cleanup() {
  local m
  for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null || true; done
  docker rmi local/postgres-staging:15 >/dev/null 2>&1 || true
  if [ "${KEEP_WORKDIR:-0}" = 1 ]; then say "work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# 1. The base root filesystem, once: debootstrap minbase, cached as a Docker image.
if exists "$BASE_IMAGE" && [ "${REBUILD_BASE:-0}" != 1 ]; then say "base $BASE_IMAGE exists (REBUILD_BASE=1 makes it again)"; else
  if ! command -v debootstrap >/dev/null; then
    say "installing debootstrap (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get -o DPkg::Lock::Timeout=300 install -y -q debootstrap >/dev/null 2>&1 || { apt-get -o DPkg::Lock::Timeout=300 update -q >/dev/null && apt-get -o DPkg::Lock::Timeout=300 install -y -q debootstrap >/dev/null; } ||
      die "could not install debootstrap (apt-get install debootstrap)"
  fi
  m=$(mirror)
  say "debootstrap --variant=minbase bookworm from $m (about 30 s)"
  debootstrap --variant=minbase bookworm "$work/base" "$m" >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log" >&2; die "debootstrap failed (log above; DEBIAN_MIRROR sets the mirror)"; }
  rm -rf "$work/base/var/cache/apt/archives/"*.deb "$work/base/var/lib/apt/lists/"*
  tar -C "$work/base" -c . | docker import -c 'CMD ["/bin/bash"]' - "$BASE_IMAGE" >/dev/null || die "docker import of the base failed"
  rm -rf "$work/base"
  say "base $BASE_IMAGE built"
fi

# Unpacks the base image's root filesystem into $1.
unpack_base() {
  local id
  mkdir -p "$1"
  id=$(docker create "$BASE_IMAGE" /bin/true)
  docker export "$id" | tar -C "$1" -x
  docker rm "$id" >/dev/null
}

# Installs Debian packages into the root filesystem $1 in a chroot (services are not started).
chroot_install() {
  local root=$1
  shift
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod +x "$root/usr/sbin/policy-rc.d"
  cp -L /etc/resolv.conf "$root/etc/resolv.conf"
  mount -t proc proc "$root/proc" && mounted+=("$root/proc")
  local apt=(chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C apt-get -q -y -o Dpkg::Options::=--force-confold)
  { "${apt[@]}" update && "${apt[@]}" install --no-install-recommends "$@"; } >"$root.apt.log" 2>&1 ||
    { tail -20 "$root.apt.log" >&2; die "apt-get install $* in the chroot failed (log above)"; }
  umount "$root/proc" && unset 'mounted[-1]'
  "${apt[@]}" clean >/dev/null 2>&1 || true
  rm -rf "$root/var/lib/apt/lists/"* "$root/usr/sbin/policy-rc.d" "$root/usr/share/doc/"* "$root/usr/share/man/"*
  : >"$root/etc/resolv.conf"
}

# Imports the root filesystem $1 as image $2 with the `docker import -c` changes that follow.
import_rootfs() {
  local root=$1 tag=$2 changes=() c
  shift 2
  for c in "$@"; do changes+=(-c "$c"); done
  tar -C "$root" -c . | docker import "${changes[@]}" - "$tag" >/dev/null || die "docker import of $tag failed"
}

build_postgres() {
  local root=$1
  # No cluster from the package: this image makes its own below, with trust auth.
  mkdir -p "$root/etc/postgresql-common"
  echo 'create_main_cluster = false' >"$root/etc/postgresql-common/createcluster.conf"
  chroot_install "$root" "${PACKAGES[postgres]}"
  cat >"$root/usr/local/bin/pg-entrypoint" <<'EOF'
#!/bin/sh
# local/postgres:15: runs the cluster made at build time as postgres. POSTGRES_DB (as the official
# image) creates that database on the first start; any other command runs as given.
set -e
[ "$1" = postgres ] || exec "$@"
shift
if [ -n "${POSTGRES_DB:-}" ] && [ "$POSTGRES_DB" != postgres ] && [ ! -f "$PGDATA/.db-$POSTGRES_DB" ]; then
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w -s start
  if [ -z "$(psql -X -q -t -A -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$POSTGRES_DB'")" ]; then createdb "$POSTGRES_DB"; fi
  pg_ctl -D "$PGDATA" -m fast -w -s stop
  : >"$PGDATA/.db-$POSTGRES_DB"
fi
exec postgres -D "$PGDATA" "$@"
EOF
  chmod 755 "$root/usr/local/bin/pg-entrypoint"
  local staging=local/postgres-staging:15 id
  import_rootfs "$root" "$staging"
  # initdb in a container of the staging image (it needs /dev and shared memory), then commit.
  id=$(docker create --network none "$staging" /bin/sh -ec '
    install -d -o postgres -g postgres -m 700 /var/lib/postgresql/data
    install -d -o postgres -g postgres -m 2775 /var/run/postgresql
    su postgres -s /bin/sh -c "/usr/lib/postgresql/15/bin/initdb -D /var/lib/postgresql/data -U postgres --auth=trust -E UTF8 --locale=C.UTF-8" >/dev/null
    echo "listen_addresses = '"'*'"'" >>/var/lib/postgresql/data/postgresql.conf
    printf "local all all trust\nhost all all 0.0.0.0/0 trust\nhost all all ::/0 trust\n" >/var/lib/postgresql/data/pg_hba.conf')
  docker start -a "$id" || { docker rm "$id" >/dev/null; die "initdb in $staging failed (output above)"; }
  docker commit \
    -c 'ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    -c 'ENV PGDATA=/var/lib/postgresql/data' \
    -c 'USER postgres' \
    -c 'ENTRYPOINT ["/usr/local/bin/pg-entrypoint"]' \
    -c 'CMD ["postgres"]' \
    -c 'EXPOSE 5432' \
    "$id" "${TAG[postgres]}" >/dev/null || die "docker commit of ${TAG[postgres]} failed"
  docker rm "$id" >/dev/null
  docker rmi "$staging" >/dev/null
}

build_redis() {
  local root=$1
  chroot_install "$root" "${PACKAGES[redis]}"
  cat >"$root/usr/local/bin/redis-entrypoint" <<'EOF'
#!/bin/sh
# local/redis:7: as the official image, arguments alone go to redis-server, and redis-server runs
# without protected mode (no configuration file: it would refuse clients from other addresses).
set -e
case "$1" in -*) set -- redis-server "$@" ;; esac
[ "$1" = redis-server ] && set -- "$@" --protected-mode no
exec "$@"
EOF
  chmod 755 "$root/usr/local/bin/redis-entrypoint"
  import_rootfs "$root" "${TAG[redis]}" 'ENTRYPOINT ["/usr/local/bin/redis-entrypoint"]' 'CMD ["redis-server"]' 'EXPOSE 6379' 'USER redis' 'WORKDIR /var/lib/redis'
}

build_nats() {
  local root=$1
  chroot_install "$root" "${PACKAGES[nats]}"
  ln -sf /usr/sbin/nats-server "$root/usr/local/bin/nats-server"
  import_rootfs "$root" "${TAG[nats]}" 'ENTRYPOINT ["/usr/sbin/nats-server"]' 'CMD ["-js", "-sd", "/tmp/nats"]' 'EXPOSE 4222 6222 8222'
}

for name in "${todo[@]}"; do
  t0=$SECONDS
  say "building ${TAG[$name]} (Debian's ${PACKAGES[$name]})"
  root="$work/$name"
  old=$(docker image inspect -f '{{.Id}}' "${TAG[$name]}" 2>/dev/null || true)
  unpack_base "$root"
  "build_$name" "$root"
  # The image a rebuild replaced (untagged now), unless a container still uses it.
  if [ -n "$old" ] && [ "$old" != "$(docker image inspect -f '{{.Id}}' "${TAG[$name]}")" ]; then docker rmi "$old" >/dev/null 2>&1 || true; fi
  rm -rf "$root" "$root.apt.log"
  say "${TAG[$name]} built in $((SECONDS - t0)) s ($(docker image inspect -f '{{.Size}}' "${TAG[$name]}" | awk '{printf "%d MB", $1 / 1e6}'))"
done
say "done: $(for n in $IMAGES; do printf '%s ' "${TAG[$n]}"; done)"
