#!/usr/bin/env bash
# Fetch lwIP 2.1.3 into DEST (default: firmware/.deps/lwip-2.1.3) and verify it.
#
# Primary source: Debian's source package `lwip` (2.1.3+dfsg1-2), downloaded with a private apt
# state directory, so the machine's own apt configuration is left untouched. The orig tarball's
# SHA-256 is pinned below. Fallback (bench PCs without Debian sources): lwIP's release tag
# STABLE-2_1_3_RELEASE from the upstream git repository. Either way the extracted src/ tree must
# match the pinned tree hash (Debian's +dfsg1 repack only drops doc/doxygen/output, so src/ is
# byte-identical to the upstream release).
set -euo pipefail

LWIP_VERSION=2.1.3
DEB_VERSION=2.1.3+dfsg1-2
ORIG_TARBALL=lwip_2.1.3+dfsg1.orig.tar.xz
ORIG_SHA256=0a8276d09fc4e97bbba2f953d74af2388fc2195ea156be9d7589e297a68fde24
SRC_TREE_SHA256=00ac4b8a09744f24421ca6ce7d735d534422d049cf045a3217ebdfd2ca91c196
UPSTREAM_GIT=https://git.savannah.nongnu.org/git/lwip.git
UPSTREAM_TAG=STABLE-2_1_3_RELEASE

here=$(cd "$(dirname "$0")" && pwd)
dest=${1:-$here/../.deps/lwip-$LWIP_VERSION}
dest=$(mkdir -p "$(dirname "$dest")" && cd "$(dirname "$dest")" && pwd)/$(basename "$dest")

die() { echo "fetch-lwip: $*" >&2; exit 1; }
log() { echo "fetch-lwip: $*" >&2; }

src_tree_hash() { (cd "$1" && find src -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1); }

if [ -f "$dest/.verified" ] && [ "$(cat "$dest/.verified")" = "$SRC_TREE_SHA256" ]; then
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

from_debian() {
  command -v apt-get >/dev/null || { log "apt-get not available"; return 1; }
  local a="$work/apt"
  mkdir -p "$a/parts" "$a/lists/partial" "$a/cache/archives/partial" "$a/dl"
  local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  [ -f "$keyring" ] || { log "no Debian archive keyring at $keyring"; return 1; }
  cat >"$a/parts/lwip-src.sources" <<SRC
Types: deb-src
URIs: ${LWIP_DEBIAN_MIRROR:-http://deb.debian.org/debian}
Suites: bookworm
Components: main
Signed-By: $keyring
SRC
  local opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$a/parts"
              -o "Dir::State::Lists=$a/lists" -o "Dir::Cache=$a/cache"
              -o "APT::Sandbox::User=root" -q)
  log "downloading Debian source package lwip=$DEB_VERSION"
  apt-get "${opts[@]}" update >"$a/update.log" 2>&1 || { log "apt-get update failed (see below)"; tail -3 "$a/update.log" >&2; return 1; }
  (cd "$a/dl" && apt-get "${opts[@]}" source --download-only "lwip=$DEB_VERSION") >"$a/source.log" 2>&1 \
    || { log "apt-get source failed"; tail -3 "$a/source.log" >&2; return 1; }
  local got
  got=$(sha256sum "$a/dl/$ORIG_TARBALL" | cut -d' ' -f1)
  [ "$got" = "$ORIG_SHA256" ] || die "checksum mismatch for $ORIG_TARBALL: got $got, pinned $ORIG_SHA256"
  tar -C "$work" -xf "$a/dl/$ORIG_TARBALL"
  mv "$work/lwip-$LWIP_VERSION" "$work/tree"
}

from_upstream_tag() {
  command -v git >/dev/null || { log "git not available"; return 1; }
  log "falling back to upstream tag $UPSTREAM_TAG"
  git clone -q --depth 1 --branch "$UPSTREAM_TAG" "$UPSTREAM_GIT" "$work/tree" || return 1
  rm -rf "$work/tree/.git"
}

if [ "${LWIP_SOURCE:-debian}" = "upstream" ]; then
  from_upstream_tag || die "could not fetch lwIP from $UPSTREAM_GIT"
else
  from_debian || from_upstream_tag || die "could not fetch lwIP $LWIP_VERSION from Debian sources or upstream git"
fi

got=$(src_tree_hash "$work/tree")
[ "$got" = "$SRC_TREE_SHA256" ] || die "lwIP src/ tree hash mismatch: got $got, pinned $SRC_TREE_SHA256"
rm -rf "$dest"
mv "$work/tree" "$dest"
echo "$SRC_TREE_SHA256" >"$dest/.verified"
log "lwIP $LWIP_VERSION verified at $dest"
