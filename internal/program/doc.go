// Package program owns a compiled program as nexus runs it: loading it
// (the manifest, its pure commands compiled, its tools, and the commands
// left off them with why), the Caller that runs its commands (pure ones
// evaluated in nexus, the others in their pools: one dispatch, used by MCP
// over stdio, HTTP and the CLI run alike), the CLI run itself (nexus
// options, the result printed or streamed, exit statuses), the output
// streams of pure commands, and serving over stdio and HTTP with hot
// reload (the pools of every generation kept until their calls end).
//
// cmd/nexus wires cobra's flags into Options and calls in here. This
// package may import httpserve, mcp, argmap, pool, eval, manifest and the
// leaf packages beside them (reload, metrics, clientconfig, morlocwire,
// ndarray); none of those imports it, and it never imports cmd.
package program
