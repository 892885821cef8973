#!/usr/bin/env bash
# Shows that the repository needs nothing outside itself: it copies the
# tracked files into an empty directory, as a fresh clone would be, and runs
# the fast tier of the tests there (go test -short ./..., the e2e tests
# included). A test, script or Makefile rule that reads a path
# beside the repository (../shared, say) finds nothing there and fails.
# TestNothingReachesOutsideTheRepository is the static half: it also finds
# absolute paths into the development machine's tree.
#
# The copy gets the C++ pools make pools built (ignored by git, rebuilt in
# the copy when older than their sources), so that it runs what a clone runs
# after make deps and make pools, no more. It lives in one place per
# worktree, emptied first: the Go build cache keys packages by directory, so
# a second run compiles only what changed. GO overrides the go command;
# arguments go to go test (e.g. -run TestX).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
go=${GO:-go}
command -v git >/dev/null && git rev-parse --is-inside-work-tree >/dev/null 2>&1 || {
  echo "self-contained: needs git and a git checkout: the copy is of the tracked files" >&2
  exit 1
}

base="${TMPDIR:-/tmp}/nexus-self-contained-$(id -u)-$(printf '%s' "$root" | cksum | cut -d' ' -f1)"
mkdir -p "$base"
# One run at a time per worktree: a second waits for the first.
if command -v flock >/dev/null; then
  exec 9>"$base.lock"
  flock 9
fi
copy="$base/repo"
rm -rf "$copy"
mkdir -p "$copy"
if [ -n "$(ls -A "$base" | grep -vx repo)" ]; then
  echo "self-contained: $base holds more than the copy" >&2
  exit 1
fi

# The tracked files as they are in the work tree (edits not yet committed
# included; a tracked file deleted in the work tree left out), with their
# times, and the built C++ pools beside them.
{
  git ls-files -z
  git ls-files -z --others --ignored --exclude-standard -- 'testdata/*/pools/cpp/pool-cpp.out'
} | tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "$copy"

echo "self-contained: go test -short ./... in $copy (nothing beside it)" >&2
cd "$copy"
status=0
# A loaded machine (make test-loaded) takes longer than go test's 10m default.
"$go" test -short -count=1 -timeout 30m "$@" ./... || status=$?
cd /
if [ "$status" -ne 0 ]; then
  echo "self-contained: the tests failed in a copy of the repository with nothing beside it: does one read outside it? (the copy is kept in $copy)" >&2
  exit "$status"
fi
rm -rf "$copy"
echo "self-contained: ok" >&2
