#!/usr/bin/env bash
# Builds the C++ pools of the example programs: every
# testdata/*/pools/cpp/pool.cpp becomes pool-cpp.out beside it, compiled
# against the runtime header in internal/pool/runtime/cpp. A pool is rebuilt
# only when its binary is missing or older than its sources or the runtime.
# Without g++ or nlohmann/json it says so and builds nothing (the C++ tests
# skip then too). CXX and CXXFLAGS override the compiler and its flags.
set -euo pipefail
cd "$(dirname "$0")/.."

cxx=${CXX:-g++}
flags=${CXXFLAGS:--std=c++17 -O2 -pthread}
runtime=internal/pool/runtime/cpp

shopt -s nullglob
sources=(testdata/*/pools/cpp/pool.cpp)
[ ${#sources[@]} -gt 0 ] || exit 0

# stale OUT FILE...: OUT is missing or older than one of the files.
stale() {
  local out=$1 f
  shift
  [ -e "$out" ] || return 0
  for f in "$@"; do
    [ "$f" -nt "$out" ] && return 0
  done
  return 1
}

todo=()
for src in "${sources[@]}"; do
  dir=$(dirname "$src")
  if stale "$dir/pool-cpp.out" "$src" "$dir"/*.hpp "$dir"/*.h "$runtime"/*.hpp; then
    todo+=("$src")
  fi
done
[ ${#todo[@]} -gt 0 ] || exit 0

if ! command -v "$cxx" >/dev/null; then
  echo "build-pools: $cxx not found: skipping the C++ pools (scripts/install-deps.sh installs it)" >&2
  exit 0
fi
if ! printf '#include <nlohmann/json.hpp>\n' | "$cxx" -std=c++17 -fsyntax-only -x c++ - 2>/dev/null; then
  echo "build-pools: nlohmann/json.hpp not found: skipping the C++ pools (Debian: nlohmann-json3-dev)" >&2
  exit 0
fi

status=0
for src in "${todo[@]}"; do
  dir=$(dirname "$src")
  out=$dir/pool-cpp.out
  tmp=$dir/.pool-cpp.out.$$ # renamed into place: a failed build leaves no half-written binary
  echo "build-pools: $src -> $out" >&2
  # shellcheck disable=SC2086 # CXXFLAGS is a list of words
  if "$cxx" $flags -I"$runtime" "$src" -o "$tmp"; then
    mv -f "$tmp" "$out"
  else
    rm -f "$tmp"
    echo "build-pools: building $src failed" >&2
    status=1
  fi
done
exit $status
