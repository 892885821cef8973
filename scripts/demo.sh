#!/usr/bin/env bash
# A scripted MCP session over stdio against testdata/plots, a program with a
# Python, an R and a C++ pool: each request is printed as it is sent (-->)
# and each reply as it arrives (<--). Usage: demo.sh [NEXUS [PROGRAM]]
set -euo pipefail
nexus=${1:-bin/nexus}
target=${2:-testdata/plots}
log=$(mktemp)
out=$(mktemp -d)
trap 'rm -rf "$log" "$out"' EXIT

# The figure plot_values draws goes to a directory of the demo's own.
coproc NX { NEXUS_OUTPUT_DIR="$out" "$nexus" mcp "$target" 2>"$log"; }
send() { printf -- '--> %s\n' "$1"; printf '%s\n' "$1" >&"${NX[1]}"; }
recv() {
  local line
  if ! IFS= read -r -t 60 line <&"${NX[0]}"; then
    echo "demo: no reply from nexus; its stderr:" >&2; cat "$log" >&2; exit 1
  fi
  printf -- '<-- %s\n\n' "$line"
}
call() { send "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"$2\",\"arguments\":$3}}"; recv; }

echo "# nexus mcp $target"
echo
send '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"demo","version":"0"}}}'; recv
send '{"jsonrpc":"2.0","method":"notifications/initialized"}'; echo
send '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'; recv
echo "# Python: a sample's measurements"
call 3 sample_values '{"sample":"control"}'
echo "# R: summary statistics of the same sample"
call 4 sample_summary '{"sample":"control"}'
echo "# C++: 52 choose 5, exactly"
call 5 binomial '{"n":52,"k":5}'
echo "# R: a plot of three values, returned as a link to the PNG it drew"
call 6 plot_values '{"values":[1.5,2.25,1.75],"title":"demo"}'
echo "# A wrong argument: a clear error, and nexus keeps serving"
call 7 binomial '{"n":"fifty-two","k":5}'
send '{"jsonrpc":"2.0","id":8,"method":"resources/list"}'; recv
exec {NX[1]}>&-
wait "$NX_PID"
echo "# stdin closed: nexus stopped its pools and exited with status $?"
echo "# nexus stderr:"
sed 's/^/#   /' "$log"
