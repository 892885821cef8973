// Package pool owns the life of pool processes: start, handshake, framing,
// calls, stderr, stop. It speaks the nexus pool protocol described in
// docs/pool-protocol.md and carries the language runtimes (runtime/) that
// pools import to speak it. It knows nothing of MCP or of argument mapping:
// callers hand it positional JSON arguments and get JSON values back.
package pool
