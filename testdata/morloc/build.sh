#!/usr/bin/env bash
# Rebuild the corpus: compile each program with the real morloc 0.98.2
# compiler and keep only the manifest.json it writes (never its pools, which
# embed morloc's runtime code). `make morloc-corpus` runs this; `make test`
# never does. Usage: build.sh [PROGRAM_DIR...] (default: every directory here
# holding a main.loc).
#
# The command, for every program, in a scratch copy of its directory:
#   HOME=$MORLOC_HOME PATH=$MORLOC_BIN:/usr/bin:/bin morloc make -o nexus main.loc
# A program that needs more (compiler flags, a main.yaml) has its own
# build.sh beside its main.loc, which says its command; that script is run
# instead, with the same MORLOC_PREFIX, MORLOC_HOME and MORLOC_BIN. (Here
# MORLOC_HOME is the HOME the compiler runs with; morloc itself never sees
# the variable, which it would take for its own data directory.)
#
# A manifest the compiler writes differs from the last build only in
# build.time when the program and the compiler are the same: such a manifest
# is left as committed (so `git diff` shows what really changed), and each
# program is reported "unchanged" or "CHANGED".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export MORLOC_PREFIX=${MORLOC_PREFIX:-/opt/morloc-0.98.2}
export MORLOC_HOME=${MORLOC_HOME:-$MORLOC_PREFIX/home}
export MORLOC_BIN=${MORLOC_BIN:-$MORLOC_PREFIX/bin}
if [ ! -x "$MORLOC_BIN/morloc" ]; then
  echo "build.sh: no morloc compiler at $MORLOC_BIN/morloc (build it with build.sh 098 from a morloc build tree, or set MORLOC_BIN)" >&2
  exit 1
fi
if [ $# -eq 0 ]; then
  set -- $(cd "$here" && ls -d */ | tr -d /)
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# but_time is a manifest (one line of JSON, as the compiler writes it) with
# its build time zeroed.
but_time() {
  sed -E 's/("build":\{[^}]*"time":)[0-9]+/\10/' "$1"
}

for prog in "$@"; do
  prog=${prog%/}
  src="$here/$prog"
  [ -f "$src/main.loc" ] || continue
  work="$scratch/$prog"
  mkdir -p "$work"
  old="$scratch/$prog.manifest.json"
  [ -f "$src/manifest.json" ] && cp "$src/manifest.json" "$old"
  if [ -f "$src/build.sh" ]; then
    how="its build.sh"
    if ! bash "$src/build.sh" >"$work/build.log" 2>&1; then
      echo "build.sh: $prog did not compile ($how):" >&2
      cat "$work/build.log" >&2
      exit 1
    fi
  else
    how="morloc make -o nexus main.loc"
    find "$src" -maxdepth 1 -type f \( -name '*.loc' -o -name '*.py' -o -name '*.R' -o -name '*.yaml' -o -name '*.json' ! -name manifest.json ! -name '*.golden.json' \) -exec cp {} "$work" \;
    if ! (cd "$work" && env -u MORLOC_HOME HOME="$MORLOC_HOME" PATH="$MORLOC_BIN:/usr/bin:/bin" morloc make -o nexus main.loc >"$work/build.log" 2>&1); then
      echo "build.sh: $prog did not compile:" >&2
      cat "$work/build.log" >&2
      exit 1
    fi
    cp "$work/nexus-build/manifest.json" "$src/manifest.json"
  fi
  if [ -f "$old" ] && [ "$(but_time "$old")" = "$(but_time "$src/manifest.json")" ]; then
    cp "$old" "$src/manifest.json"
    echo "$prog: unchanged but for its build time ($how)"
  else
    echo "$prog: manifest.json CHANGED ($how)"
  fi
done
