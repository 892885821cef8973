#!/usr/bin/env bash
# Runs a command with a busy loop on every CPU for the whole of its run
# (make test-loaded): the tests must pass on a loaded machine, as on a
# shared CI runner, where CPU is scarce and timings stretch. HOGS overrides the number of loops.
# The loops end with the command however it ends: a trap kills them when
# this script exits, and each loop also stops by itself once this script
# is gone (SIGKILL included).
set -euo pipefail
hogs=${HOGS:-$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
pids=()
stop() {
  if [ ${#pids[@]} -gt 0 ]; then
    kill "${pids[@]}" 2>/dev/null || true
  fi
}
trap stop EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
for _ in $(seq "$hogs"); do
  # kill -0 is a builtin: the loop stays on the CPU, and ends with us.
  sh -c 'while kill -0 "$1" 2>/dev/null; do :; done' loaded-hog "$$" &
  pids+=($!)
done
echo "loaded: $hogs busy loops (pids ${pids[*]}) for: $*" >&2
"$@"
