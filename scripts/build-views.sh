#!/usr/bin/env bash
# Regenerates nexus's views and browser page (internal/views/assets, embedded
# with go:embed, so `go build` needs no npm): vendors uPlot at the version
# scripts/views/package-lock.json pins into internal/views/vendor/uplot
# (its minified build, its stylesheet, its licence and version), then
# inlines it and internal/views/src into one HTML file per asset and
# records versions, licences and input hashes in assets/VERSIONS.json.
# Run it after changing anything under internal/views/src; commit what it
# writes. `go test ./internal/views` fails while the assets are stale.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/scripts/views"
vendor="$root/internal/views/vendor/uplot"
if [ ! -f "$build/node_modules/uplot/package.json" ] || [ "$build/package-lock.json" -nt "$build/node_modules/.package-lock.json" ]; then
  (cd "$build" && npm ci --no-audit --no-fund --loglevel=error)
fi
mkdir -p "$vendor"
cp "$build/node_modules/uplot/dist/uPlot.iife.min.js" "$build/node_modules/uplot/dist/uPlot.min.css" "$build/node_modules/uplot/LICENSE" "$vendor/"
node -p 'require(process.argv[1]).version' "$build/node_modules/uplot/package.json" > "$vendor/VERSION"
node "$build/build.mjs" "$root/internal/views"
