// Package argmap owns the mapping between a manifest command and its two
// faces: the MCP tool (docs/spec.md §4.5 tool objects and JSON Schemas, the
// §4.6 exclusions, §4.7 named arguments validated and turned into the
// positional call a pool receives) and the CLI (§3 argv parsing and --help
// text). It also turns a pool's result back into the value a client sees. It
// does no I/O.
package argmap
