#!/usr/bin/env bash
# Installs the real morloc 0.69.0 toolchain that the e2e tests compile their
# testdata/morloc-0.69 programs with (e2e/morloc_*_test.go): the
# compiler at /opt/morloc-0.69.0/bin/morloc, and the C runtime that
# `morloc init` installs under $HOME (libmorloc.so, the C morloc-nexus the
# tests compare nexus with, pymorloc, librmorloc, the C++ headers).
#
# When all three are there it does nothing. Otherwise it builds them from the
# first source it finds:
#   1. ../shared/morloc/build.sh beside the repository (the archives of this
#      machine);
#   2. $MORLOC_SRC, a directory laid out the same way: build.sh and src/
#      holding its archives;
#   3. morloc's public repository at tag v0.69.0, built with Haskell Stack
#      from Stackage (network needed; this path is not tested here, see
#      below).
# Building takes about 8 minutes on 2 cores, needs root (apt-get, GHC's
# global package database, /opt) and Debian 12's GHC 9.0.2 for 1 and 2.
set -euo pipefail

VERSION=0.69.0
COMPILER=/opt/morloc-$VERSION/bin/morloc
RUNTIME_NEXUS=$HOME/.local/bin/morloc-nexus
RUNTIME_LIB=$HOME/.local/share/morloc/lib/libmorloc.so
say() { echo "install-morloc: $*"; }
die() { echo "install-morloc: $*" >&2; exit 1; }

installed() { [ -x "$COMPILER" ] && [ -x "$RUNTIME_NEXUS" ] && [ -f "$RUNTIME_LIB" ]; }
if installed; then
  say "morloc $VERSION is installed ($COMPILER, $RUNTIME_NEXUS, $RUNTIME_LIB)"
  exit 0
fi
say "morloc $VERSION is not installed: missing$([ -x "$COMPILER" ] || echo " $COMPILER")$([ -x "$RUNTIME_NEXUS" ] || echo " $RUNTIME_NEXUS")$([ -f "$RUNTIME_LIB" ] || echo " $RUNTIME_LIB")"

# The build writes /opt, GHC's global package database and Debian packages:
# it runs as root. A user with password-less sudo gets it through sudo, with
# their own HOME (where `morloc init` puts the runtime the pools load), and
# the runtime is given back to them afterwards.
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    say "building as root through sudo, with HOME=$HOME"
    sudo -n env HOME="$HOME" MORLOC_SRC="${MORLOC_SRC:-}" PATH="$PATH" bash "$0"
    sudo -n chown -R "$(id -u):$(id -g)" "$HOME/.local/share/morloc" "$RUNTIME_NEXUS"
    exit 0
  fi
  die "building morloc $VERSION needs root (apt-get, GHC's package database, /opt). Run:
  sudo env HOME=\"\$HOME\" $0
then make test again (or go test -short, which skips the morloc tests)."
fi

repo=$(cd "$(dirname "$0")/.." && pwd)
shared=$repo/../shared/morloc # outside-repo: make deps may build morloc from ../shared, one source among others

run_build_sh() {  # $1 = a directory holding build.sh and src/
  say "building from $1/build.sh 069 (about 8 minutes on 2 cores)"
  "$1/build.sh" 069 || die "$1/build.sh 069 failed (exit $?); its output is above"
}

if [ -x "$shared/build.sh" ] && [ -d "$shared/src" ]; then
  run_build_sh "$(cd "$shared" && pwd)"
elif [ -n "${MORLOC_SRC:-}" ]; then
  [ -x "$MORLOC_SRC/build.sh" ] && [ -d "$MORLOC_SRC/src" ] ||
    die "MORLOC_SRC=$MORLOC_SRC must hold build.sh and src/ (the layout of morloc's offline build tree)"
  run_build_sh "$(cd "$MORLOC_SRC" && pwd)"
else
  # morloc's own way at v0.69.0: Stack builds the compiler with the
  # libraries of its Stackage snapshot (which has the three that Debian
  # lacks); `morloc init` builds the C runtime and clones mlccpptypes; the
  # base modules come from GitHub. NOT TESTED here (no network): what the
  # tests need from it is only the three files checked above.
  say "no morloc build tree beside the repository and no MORLOC_SRC: building from https://github.com/morloc-project/morloc at v$VERSION (untested path, needs the network)"
  for tool in git stack; do
    command -v $tool >/dev/null || die "this path needs $tool (Haskell Stack: https://docs.haskellstack.org); or set MORLOC_SRC to a directory holding build.sh and src/"
  done
  work=$(mktemp -d /tmp/morloc-src.XXXXXX)
  trap 'rm -rf "$work"' EXIT
  git clone --depth 1 --branch "v$VERSION" https://github.com/morloc-project/morloc "$work/morloc" ||
    die "git clone of morloc v$VERSION failed"
  mkdir -p "$(dirname "$COMPILER")"
  (cd "$work/morloc" && stack install --local-bin-path "$(dirname "$COMPILER")") || die "stack install failed"
  export PATH="$(dirname "$COMPILER"):$HOME/.local/bin:/usr/bin:/bin"
  morloc init || die "morloc init failed"
  morloc install internal root root-py root-r || die "morloc install of the base modules failed"
fi

installed || die "the build ended, but morloc $VERSION is still incomplete (want $COMPILER, $RUNTIME_NEXUS, $RUNTIME_LIB)"
say "morloc $VERSION installed: $("$COMPILER" --version 2>&1 | head -1)"
