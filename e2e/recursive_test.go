package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Recursive records keep nexus's $defs/$ref schema, where morloc writes
// {"type":"object"} for the back-reference (a deliberate difference:
// testdata/morloc/README.md, "Deliberate differences" 2). Both SDK clients
// must accept it and send nested values that nexus takes. The program is the
// corpus's recursive-pure, compiled by the real morloc 0.98.2: pure, so
// nexus evaluates it with no pool.

// Nested values three levels deep, valid against the schemas.
var (
	recursiveTree  = map[string]any{"val": 1, "children": []any{map[string]any{"val": 2, "children": []any{map[string]any{"val": 3, "children": []any{}}}}, map[string]any{"val": 4, "children": []any{}}}}
	recursiveChain = map[string]any{"word": "b", "next": map[string]any{"word": "c", "next": map[string]any{"word": "d", "next": nil}}}
)

const (
	wantChildren = `[{"val":2,"children":[{"val":3,"children":[]}]},{"val":4,"children":[]}]`
	wantGrow     = `{"word":"a","next":{"word":"b","next":{"word":"c","next":{"word":"d","next":null}}}}`
)

// The go-sdk client lists the tools, finds the $defs/$ref schemas, and
// calls with nested values; a JSON Schema validator (draft 2020-12)
// compiles each advertised schema and accepts those values at every depth
// and refuses a value wrong three levels down, which morloc's
// {"type":"object"} would let through.
func TestRecursiveRecordsGoSDK(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := connectGoSDK(t, ctx, sdk.NewClient(&sdk.Implementation{Name: "e2e-go-sdk", Version: "0"}, nil), "stdio", "2025-06-18", corpusProgram("recursive-pure"))
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	schemas := map[string]*jsonschema.Schema{}
	for _, tl := range tools.Tools {
		raw, _ := json.Marshal(tl.InputSchema)
		if tl.Name == "childrenOf" || tl.Name == "grow" {
			if !strings.Contains(string(raw), `"$defs"`) || !strings.Contains(string(raw), `"$ref":"#/$defs/`) {
				t.Errorf("%s: input schema without $defs/$ref: %s", tl.Name, raw)
			}
		}
		c := jsonschema.NewCompiler()
		c.Draft = jsonschema.Draft2020
		if err := c.AddResource(tl.Name+".json", strings.NewReader(string(raw))); err != nil {
			t.Fatalf("%s: %v", tl.Name, err)
		}
		s, err := c.Compile(tl.Name + ".json")
		if err != nil {
			t.Fatalf("%s: the advertised schema does not compile: %v\n%s", tl.Name, err, raw)
		}
		schemas[tl.Name] = s
	}
	valid := func(tool string, args map[string]any) error {
		raw, _ := json.Marshal(args)
		var v any
		_ = json.Unmarshal(raw, &v)
		return schemas[tool].Validate(v)
	}
	if err := valid("childrenOf", map[string]any{"_1": recursiveTree}); err != nil {
		t.Errorf("childrenOf: a valid tree refused by its schema: %v", err)
	}
	if err := valid("grow", map[string]any{"_1": "a", "_2": recursiveChain}); err != nil {
		t.Errorf("grow: a valid chain refused by its schema: %v", err)
	}
	bad := map[string]any{"val": 1, "children": []any{map[string]any{"val": 2, "children": []any{map[string]any{"val": "three", "children": []any{}}}}}}
	if err := valid("childrenOf", map[string]any{"_1": bad}); err == nil {
		t.Errorf("childrenOf: a tree with a string three levels down passes its schema")
	}

	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"childrenOf", map[string]any{"_1": recursiveTree}, wantChildren},
		{"grow", map[string]any{"_1": "a", "_2": recursiveChain}, wantGrow},
		{"rootOf", map[string]any{"tree": recursiveTree}, "1"},
	} {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		if text := res.Content[0].(*sdk.TextContent).Text; res.IsError || text != c.want {
			t.Errorf("%s: %q (isError %v), want %s", c.tool, text, res.IsError, c.want)
		}
	}
	// A wrong value three levels down: nexus refuses it too.
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "childrenOf", Arguments: map[string]any{"_1": bad}})
	if err == nil && !res.IsError {
		t.Errorf("childrenOf with a string three levels down: accepted")
	}
	// A recursive record returned: structuredContent, against an outputSchema with $defs.
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "grow", Arguments: map[string]any{"_1": "a", "_2": recursiveChain}})
	if err != nil {
		t.Fatal(err)
	}
	var wantValue any
	_ = json.Unmarshal([]byte(wantGrow), &wantValue)
	got, _ := json.Marshal(res.StructuredContent)
	want, _ := json.Marshal(wantValue) // both with sorted keys
	if string(got) != string(want) {
		t.Errorf("grow: structuredContent %s, want %s", got, wantGrow)
	}
}

// The TypeScript SDK client (e2e/tsclient/client.mjs) lists the tools and
// calls with nested values; it checks each structuredContent against the
// tool's outputSchema (AJV), so `leaf` and `grow` coming back as results
// means it compiled the $defs/$ref output schemas and accepted the values.
func TestRecursiveRecordsTypeScriptSDK(t *testing.T) {
	node, dir := tsClient(t)
	call := func(name string, args map[string]any) map[string]any {
		return map[string]any{"name": name, "arguments": args}
	}
	run := runTSClient(t, node, dir, corpusProgram("recursive-pure"), "main", map[string]any{"calls": []any{
		call("childrenOf", map[string]any{"_1": recursiveTree}),
		call("grow", map[string]any{"_1": "a", "_2": recursiveChain}),
		call("leaf", map[string]any{"_1": 5}),
		call("rootOf", map[string]any{"tree": recursiveTree}),
	}})
	want := map[string]string{"childrenOf": wantChildren, "grow": wantGrow, "leaf": `{"val":5,"children":[]}`, "rootOf": "1"}
	if len(run.Calls) != len(want) {
		t.Fatalf("calls %+v", run.Calls)
	}
	for _, c := range run.Calls {
		if c.Error != "" || c.IsError || c.Text == nil || *c.Text != want[c.Name] {
			t.Errorf("%s: text %v isError %v error %q; want %s", c.Name, c.Text, c.IsError, c.Error, want[c.Name])
		}
		if c.Name == "leaf" || c.Name == "grow" {
			if string(c.StructuredContent) != want[c.Name] {
				t.Errorf("%s: structuredContent %s, want %s", c.Name, c.StructuredContent, want[c.Name])
			}
		}
	}
}
