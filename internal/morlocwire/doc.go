// Package morlocwire owns morloc's pool wire format, in the two dialects
// nexus drives: morloc 0.69.0's C runtime and 0.98.2's Rust runtime
// (docs/spec.md §8). It builds the packets a nexus sends (ping, call,
// and each argument as MessagePack checked against its schema) and reads
// the ones a pool sends back (data packets whose voidstar, MessagePack or
// failure payload it turns into JSON in nexus's value conventions),
// reading values out of the pools' shared memory, where it never
// allocates: its one write is to a result block's reference count while
// it holds the block (Packet.Hold). It does no other I/O: the driver in
// internal/pool owns sockets and processes. It imports manifest (schemas)
// and ndarray (numeric arrays).
package morlocwire
