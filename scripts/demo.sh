#!/usr/bin/env bash
# A scripted MCP session over stdio: each request is printed as it is sent
# (-->) and each reply as it arrives (<--). Usage: demo.sh NEXUS TARGET
set -euo pipefail
nexus=${1:-bin/nexus}
target=${2:-testdata/combat}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

coproc NX { "$nexus" mcp "$target" 2>"$log"; }
send() { printf -- '--> %s\n' "$1"; printf '%s\n' "$1" >&"${NX[1]}"; }
recv() {
  local line
  if ! IFS= read -r -t 60 line <&"${NX[0]}"; then
    echo "demo: no reply from nexus; its stderr:" >&2; cat "$log" >&2; exit 1
  fi
  printf -- '<-- %s\n\n' "$line"
}

echo "# nexus mcp $target"
echo
send '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"demo","version":"0"}}}'; recv
send '{"jsonrpc":"2.0","method":"notifications/initialized"}'; echo
send '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'; recv
send '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fighterDamage","arguments":{"_1":15}}}'; recv
send '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"rollAdv","arguments":{}}}'; recv
send '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"intro","arguments":{"_1":"Goblin"}}}'; recv
send '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fireball","arguments":{}}}'; recv
send '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"fighterDamage","arguments":{"_1":"fifteen"}}}'; recv
exec {NX[1]}>&-
wait "$NX_PID"
echo "# stdin closed: nexus stopped its pools and exited with status $?"
echo "# nexus stderr:"
sed 's/^/#   /' "$log"
