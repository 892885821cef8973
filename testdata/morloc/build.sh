#!/usr/bin/env bash
# Rebuild the corpus: compile each program with the real morloc 0.98.2
# compiler and keep only the manifest.json it writes (never its pools, which
# embed morloc's runtime code). `make morloc-corpus` runs this; `make test`
# never does. Usage: build.sh [PROGRAM_DIR...] (default: every directory here
# holding a main.loc).
#
# The command, for every program, in a scratch copy of its directory:
#   HOME=$MORLOC_HOME PATH=$MORLOC_BIN:/usr/bin:/bin morloc make -o nexus main.loc
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
MORLOC_PREFIX=${MORLOC_PREFIX:-/opt/morloc-0.98.2}
MORLOC_HOME=${MORLOC_HOME:-$MORLOC_PREFIX/home}
MORLOC_BIN=${MORLOC_BIN:-$MORLOC_PREFIX/bin}
if [ ! -x "$MORLOC_BIN/morloc" ]; then
  echo "build.sh: no morloc compiler at $MORLOC_BIN/morloc (build it with build.sh 098 from a morloc build tree, or set MORLOC_BIN)" >&2
  exit 1
fi
if [ $# -eq 0 ]; then
  set -- $(cd "$here" && ls -d */ | tr -d /)
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for prog in "$@"; do
  prog=${prog%/}
  src="$here/$prog"
  [ -f "$src/main.loc" ] || continue
  work="$scratch/$prog"
  mkdir -p "$work"
  find "$src" -maxdepth 1 -type f \( -name '*.loc' -o -name '*.py' -o -name '*.R' -o -name '*.json' ! -name manifest.json ! -name '*.golden.json' \) -exec cp {} "$work" \;
  if ! (cd "$work" && HOME="$MORLOC_HOME" PATH="$MORLOC_BIN:/usr/bin:/bin" morloc make -o nexus main.loc >"$work/build.log" 2>&1); then
    echo "build.sh: $prog did not compile:" >&2
    cat "$work/build.log" >&2
    exit 1
  fi
  cp "$work/nexus-build/manifest.json" "$src/manifest.json"
  echo "$prog: manifest.json"
done
