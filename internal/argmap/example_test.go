package argmap_test

import (
	"encoding/json"
	"fmt"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/manifest"
)

// statsManifest is a program of one command, scale: a list of reals and
// an option, -f/--factor, with a default.
func statsManifest() *manifest.Manifest {
	m, err := manifest.Parse("/programs/stats/manifest.json", []byte(`{
  "name": "stats",
  "build": {"path": ".", "time": 0, "morloc_version": "0.98.2"},
  "pools": [{"lang": "py", "exec": ["python3", "pools/py/pool.py"], "socket": "pipe-py"}],
  "commands": [
    {"name": "scale", "type": "remote", "mid": 1, "pool": 0, "needed_pools": [0],
     "desc": ["Multiply each value by a factor"],
     "args": [
       {"kind": "pos", "schema": "af8", "type": "[Real]", "desc": ["The values"]},
       {"kind": "opt", "schema": "j", "type": "Int", "short": "f", "long": "factor", "default": "2", "desc": ["The factor"]}
     ],
     "return": {"schema": "af8", "type": "[Real]", "desc": []}}
  ]
}`))
	if err != nil {
		panic(err)
	}
	return m
}

// A command becomes a tool whose input schema names each argument: a
// positional as _1, _2, ..., an option by its long name. A Real shows as
// a number; an argument may also be "NaN", "Infinity" or "-Infinity",
// since JSON has no numbers for them.
func ExampleTools() {
	tools, excluded := argmap.Tools(statsManifest())
	fmt.Println(len(tools), "tool,", len(excluded), "excluded")
	tool := tools[0].Object(argmap.FullView)
	name, _ := tool.Get("name")
	in, _ := tool.Get("inputSchema")
	b, _ := json.Marshal(in)
	fmt.Printf("%s: %s\n", name, b)
	// Output:
	// 1 tool, 0 excluded
	// scale: {"type":"object","properties":{"_1":{"type":"array","items":{"type":"number"},"description":"The values"},"factor":{"type":"integer","description":"The factor (default: 2)"}},"required":["_1"],"additionalProperties":false}
}

// A tools/call's named arguments become the command's positional call:
// the option's default filled in, each Real written as one.
func ExampleTool_ToPositional() {
	tools, _ := argmap.Tools(statsManifest())
	for _, arguments := range []string{`{"_1":[1.5,2]}`, `{"_1":[1.5,2],"factor":10}`, `{"factor":10}`} {
		call, err := tools[0].ToPositional(json.RawMessage(arguments))
		if err != nil {
			fmt.Println(err)
			continue
		}
		args, _ := call.JSONArgs()
		fmt.Printf("%s\n", args)
	}
	// Output:
	// [[1.5,2.0] 2]
	// [[1.5,2.0] 10]
	// missing required argument '_1' of 'scale'
}

// A command line becomes the same positional call.
func ExampleFromCLI() {
	m := statsManifest()
	args, err := argmap.FromCLI(&m.Commands[0], []string{"--factor", "3", "[1.5,2]"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s\n", args)
	// Output:
	// [[1.5,2.0] 3]
}
