// Package pool owns the life of pool processes: start, handshake, framing,
// calls, stderr, stop, and their supervision: restarts (with a growing delay
// for a pool that keeps failing), call timeouts, replacing a process whose
// call is stuck, and a reaper that outlives nexus to kill the pools' process
// groups. It speaks the nexus pool protocol described in
// docs/pool-protocol.md and carries the language runtimes (runtime/) that
// pools import to speak it. It knows nothing of MCP or of argument mapping:
// callers hand it positional JSON arguments and get JSON values back.
package pool
