// Package eval owns morloc's pure expressions: the `expr` tree that the
// manifest gives a `type: "pure"` command, whose whole body is morloc code
// that nexus evaluates itself, with no pool (docs/spec.md §7). It
// parses and checks a tree once (Compile), then evaluates it on one JSON
// value per manifest argument and returns the result as JSON (Run).
//
// It owns the values and types of that language: types (schema strings,
// parsed by manifest.ParseType, with fixed-length lists, recursive types,
// `+` and `/` sizes and `*`, and turned into a graph whose back-references
// point at their declarations, with morloc's byte layouts), values
// (integers exact at any size, reals, strings, lists, tuples, records,
// optionals), morloc's JSON reader and its two JSON writers (the client
// form nexus sends, and morloc's own text that @show and @savej make),
// morloc's structural @hash, and @save/@load in JSON and msgpack.
//
// It knows nothing of MCP, pools or the CLI, and imports nothing of nexus
// but internal/manifest, internal/jsontext (which reads its JSON) and
// internal/msgpack (which writes @savem's bytes). Every tag of
// docs/spec.md §7.3.1–§7.3.14 is supported, and of §7.3.15 the output
// streams (@open of an OStream, @append, @stdout, @stderr, @write, @flush,
// @close): the evaluator sequences them, and the Streams its caller gives
// RunWith write them (streams.go). Refused, with a clear error: the input
// handles and streams of §7.3.15 and morloc's binary voidstar format
// (Program.Refusal names them at compile time). Evaluation is bounded
// (Limits: steps, memory, depth) and honours its context, so a hostile tree
// gives an error, never a hang.
package eval
