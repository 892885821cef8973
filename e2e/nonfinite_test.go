package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v5"
)

// NaN and the infinities travel to MCP clients as "NaN", "Infinity" and
// "-Infinity", in records and lists of records too, and a tool's schemas say
// so: a client that checks structuredContent against the tool's outputSchema
// accepts the result, and one that sends the strings as arguments where a
// Real is declared is served.

// nonFiniteCall is one call of testdata/scientific, made in each language,
// and its answer: the text, and for a record the structuredContent.
type nonFiniteCall struct {
	fn, args, want string
	record         bool
}

var nonFiniteCalls = []nonFiniteCall{
	{"inRecord", `{}`, `{"x":"NaN","y":"-Infinity"}`, true},
	{"inRecords", `{}`, `[{"x":"NaN","y":1.5},{"x":"Infinity","y":"-Infinity"}]`, false},
	{"inCloud", `{}`, `{"points":[{"x":"NaN","y":0.5},{"x":1,"y":"Infinity"}],"scale":"NaN"}`, true},
	{"swap", `{"_1":{"x":"NaN","y":"-Infinity"}}`, `{"x":"-Infinity","y":"NaN"}`, true},
	{"idReal", `{"_1":"Infinity"}`, `"Infinity"`, false},
}

// The TypeScript SDK's Client checks every structuredContent against the
// outputSchema it listed, and throws when they disagree: before a Real
// admitted the strings, it refused inRecord_* ("Structured content does not
// match the tool's output schema"), whose outputSchema said "type": "number"
// for x.
func TestTypeScriptSDKAcceptsNonFiniteResults(t *testing.T) {
	requireScientific(t)
	node, dir := tsClient(t)
	var calls []any
	var want []nonFiniteCall
	for _, c := range nonFiniteCalls {
		for _, lang := range scientificLangs {
			calls = append(calls, map[string]any{"name": c.fn + "_" + lang, "arguments": json.RawMessage(c.args)})
			want = append(want, c)
		}
	}
	run := runTSClient(t, node, dir, program("scientific"), "scientific", map[string]any{"calls": calls})
	if len(run.Calls) != len(calls) {
		t.Fatalf("ts client made %d calls of %d: %+v", len(run.Calls), len(calls), run.Calls)
	}
	for i, got := range run.Calls {
		c := want[i]
		switch {
		case got.Error != "":
			t.Errorf("%s %s: the client refused the result: %s", got.Name, c.args, got.Error)
		case got.IsError || got.Text == nil || *got.Text != c.want:
			t.Errorf("%s %s: isError %v, text %v; want %s", got.Name, c.args, got.IsError, got.Text, c.want)
		case c.record && !sameJSON(got.StructuredContent, []byte(c.want)):
			t.Errorf("%s: structuredContent %s, want %s", got.Name, got.StructuredContent, c.want)
		case !c.record && string(got.StructuredContent) != "null":
			t.Errorf("%s: structuredContent %s for a return that is no record", got.Name, got.StructuredContent)
		}
	}
}

// The go-sdk client does not check results itself; a Go client checks
// structuredContent against the listed outputSchema with a JSON Schema
// validator (here santhosh-tekuri/jsonschema, draft 2020-12), in both
// eras.
func TestGoSDKAcceptsNonFiniteResults(t *testing.T) {
	requireScientific(t)
	for _, era := range []struct{ name, pin string }{{"2026-07-28", ""}, {"2025-06-18", "2025-06-18"}} {
		t.Run(era.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cs, _, _ := goSDKConnect(t, ctx, "scientific", era.pin, nil)
			listed, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			tools := map[string]*sdk.Tool{}
			for _, tl := range listed.Tools {
				tools[tl.Name] = tl
			}
			for _, c := range nonFiniteCalls {
				for _, lang := range scientificLangs {
					name := c.fn + "_" + lang
					tool := tools[name]
					if tool == nil {
						t.Fatalf("tools/list lacks %s", name)
					}
					var args map[string]any
					if err := json.Unmarshal([]byte(c.args), &args); err != nil {
						t.Fatal(err)
					}
					res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
					if err != nil {
						t.Errorf("%s %s: %v", name, c.args, err)
						continue
					}
					if text := firstText(t, res); res.IsError || text != c.want {
						t.Errorf("%s %s = %s (isError %v), want %s", name, c.args, text, res.IsError, c.want)
					}
					if (tool.OutputSchema != nil) != c.record {
						t.Errorf("%s: outputSchema %v, want one only for a record", name, tool.OutputSchema)
						continue
					}
					if c.record {
						if err := validateAgainst(tool.OutputSchema, res.StructuredContent); err != nil {
							t.Errorf("%s: structuredContent does not match the outputSchema: %v", name, err)
						}
						sc, _ := json.Marshal(res.StructuredContent)
						if !sameJSON(sc, []byte(c.want)) {
							t.Errorf("%s: structuredContent %s, want %s", name, sc, c.want)
						}
					}
				}
			}
		})
	}
}

// validateAgainst checks value against a JSON Schema (draft 2020-12).
func validateAgainst(schema, value any) error {
	doc, err := json.Marshal(schema)
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	if err := c.AddResource("output.json", bytes.NewReader(doc)); err != nil {
		return err
	}
	s, err := c.Compile("output.json")
	if err != nil {
		return err
	}
	raw, err := json.Marshal(value)
	if err != nil {
		return err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	return s.Validate(v)
}

// The same arguments through the plain HTTP API (POST /call) and MCP over
// HTTP, to a remote command and to pure ones, which nexus evaluates
// itself: the function gets NaN or the infinity, and gives it back.
func TestNonFiniteArgumentsOverHTTP(t *testing.T) {
	requireScientific(t)
	srv := startHTTP(t, nil, "serve", "--port", "0", program("scientific"), pureProgram(t))
	files := t.TempDir()
	for _, c := range []struct{ path, body, want string }{
		{"/call/scientific/idReal_cpp", `["-Infinity"]`, `"-Infinity"`},
		{"/call/scientific/doubled_r", `[[0.5,"NaN","Infinity"]]`, `[1,"NaN","Infinity"]`},
		{"/call/scientific/swap_py", `[{"x":"NaN","y":2}]`, `{"x":2,"y":"NaN"}`},
		{"/call/pure/jsonReal", `["-Infinity",` + strconvQuote(filepath.Join(files, "r.json")) + `]`, `"-Infinity"`},
		{"/call/pure/jsonFixedTupList", `[[[1,"NaN"]],` + strconvQuote(filepath.Join(files, "t.json")) + `]`, `[[1,"NaN"]]`},
	} {
		resp, err := http.Post(srv.base+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var reply struct {
			Status string          `json:"status"`
			Result json.RawMessage `json:"result"`
			Error  string          `json:"error"`
		}
		if json.Unmarshal(raw, &reply) != nil || resp.StatusCode != 200 || string(reply.Result) != c.want {
			t.Errorf("POST %s %s: %d %s, want the result %s", c.path, c.body, resp.StatusCode, raw, c.want)
		}
	}
	for i, c := range []struct{ name, args, want string }{
		{"scientific__idReal_r", `{"_1":"NaN"}`, `"NaN"`},
		{"pure__jsonReal", `{"_1":"Infinity","_2":` + strconvQuote(filepath.Join(files, "m.json")) + `}`, `"Infinity"`},
	} {
		if text, isErr := srv.statelessCall(i+1, c.name, c.args); isErr || text != c.want {
			t.Errorf("MCP %s %s: %q (isError %v), want %s", c.name, c.args, text, isErr, c.want)
		}
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
