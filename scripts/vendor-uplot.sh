#!/usr/bin/env bash
# Vendors uPlot, the charting library of nexus's views, at the version
# scripts/views/package-lock.json pins: its minified build, its stylesheet,
# its licence and its version go into internal/views/vendor/uplot, which the
# views embed (go:embed; `go build` needs no npm). Run it after changing the
# pinned version; commit what it writes.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
pin="$root/scripts/views"
vendor="$root/internal/views/vendor/uplot"
if [ ! -f "$pin/node_modules/uplot/package.json" ] || [ "$pin/package-lock.json" -nt "$pin/node_modules/.package-lock.json" ]; then
  (cd "$pin" && npm ci --no-audit --no-fund --loglevel=error)
fi
mkdir -p "$vendor"
cp "$pin/node_modules/uplot/dist/uPlot.iife.min.js" "$pin/node_modules/uplot/dist/uPlot.min.css" "$pin/node_modules/uplot/LICENSE" "$vendor/"
node -p 'require(process.argv[1]).version' "$pin/node_modules/uplot/package.json" > "$vendor/VERSION"
echo "vendor-uplot: uPlot $(cat "$vendor/VERSION") in internal/views/vendor/uplot"
