package manifest_test

import (
	"fmt"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// A type string is morloc's wire schema of a value (docs/manifest.md): a
// record of a real and an optional string here, with its native hint.
func ExampleParseType() {
	t, err := manifest.ParseType("<dict>m21af81b?s")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(t.Kind, "with hint", t.Hint)
	for _, f := range t.Fields {
		fmt.Printf("  %s: %s (%s)\n", f.Key, f.Type.Kind, f.Type)
	}
	_, err = manifest.ParseType("aj)")
	fmt.Println(err)
	// Output:
	// record with hint dict
	//   a: real (f8)
	//   b: optional (?s)
	// type string "aj)" at offset 2: unexpected trailing ")" after a complete type
}

// A manifest from bytes: its commands, each argument's type, and the
// pool each remote command runs in.
func ExampleParse() {
	m, err := manifest.Parse("/programs/stats/manifest.json", []byte(`{
  "name": "stats",
  "build": {"path": ".", "time": 0, "morloc_version": "0.98.2"},
  "pools": [{"lang": "py", "exec": ["python3", "pools/py/pool.py"], "socket": "pipe-py"}],
  "commands": [
    {"name": "mean", "type": "remote", "mid": 1, "pool": 0, "needed_pools": [0],
     "desc": ["The mean of a list of reals"],
     "args": [{"kind": "pos", "schema": "af8", "type": "[Real]", "desc": []}],
     "return": {"schema": "f8", "type": "Real", "desc": []}}
  ]
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Name, "in", m.Dir)
	for _, c := range m.Commands {
		fmt.Printf("%s (%s, pool %s): %s\n", c.Name, c.Type, m.Pools[c.Pool].Lang, c.Desc[0])
		for _, a := range c.Args {
			fmt.Printf("  %s argument %s, type string %s\n", a.Kind, a.TypeName, a.T)
		}
	}
	// Output:
	// stats in /programs/stats
	// mean (remote, pool py): The mean of a list of reals
	//   pos argument [Real], type string af8
}
