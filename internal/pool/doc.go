// Package pool owns the life of pool processes: start, handshake, framing,
// calls, stderr, stop, and their supervision: restarts (with a growing delay
// for a pool that keeps failing), call timeouts, replacing a process whose
// call is stuck, and a reaper that outlives nexus to kill the pools' process
// groups and remove what they leave on disk.
//
// One owner, child.go, runs every pool process as the operating system sees
// it: exec, its process group, its output, TERM then KILL, and its death.
// Two protocols speak to it: nexus*.go the nexus pool protocol described in
// docs/internals.md, with the language runtimes (runtime/) that pools
// import to speak it, supervised by worker.go (a pool's worker processes,
// restarts, stuck calls); and morloc*.go morloc's own, for the pools the
// morloc compiler generates (docs/spec.md §8), run as instances of the
// whole program, each with its own temporary directory, sockets and shared
// memory, serving one call at a time (morloc.go). set.go's Set hands each
// call to its pool's runner (runner.go), one of those two. The package
// knows nothing of MCP or of argument mapping: callers hand it positional
// JSON arguments and get JSON values back.
package pool
