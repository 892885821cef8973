#!/usr/bin/env bash
# Rebuilds manifest.json beside this script with the real morloc 0.98.2
# compiler, in a scratch copy of this directory (main.yaml gives the run_log
# templates), by the command, which sets every top-level manifest field:
#   morloc make --inline-size 4k --no-shm --tmpdir /tmp/args-toplevel-files \
#     --unsafe-skip-null-check --debug -o nexus main.loc
# (HOME and PATH point at the compiler: MORLOC_PREFIX, default
# /opt/morloc-0.98.2; morloc itself never sees MORLOC_HOME, which it would
# take for its own data directory). Only manifest.json is kept, never the pools.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prefix=${MORLOC_PREFIX:-/opt/morloc-0.98.2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
find "$here" -maxdepth 1 -type f \( -name '*.loc' -o -name '*.py' -o -name '*.R' -o -name '*.yaml' \) -exec cp {} "$work" \;
(cd "$work" && env -u MORLOC_HOME HOME="${MORLOC_HOME:-$prefix/home}" PATH="${MORLOC_BIN:-$prefix/bin}:/usr/bin:/bin" \
  morloc make --inline-size 4k --no-shm --tmpdir /tmp/args-toplevel-files \
    --unsafe-skip-null-check --debug -o nexus main.loc)
cp "$work/nexus-build/manifest.json" "$here/manifest.json"
