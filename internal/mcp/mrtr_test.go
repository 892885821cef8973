package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// confirmManifest: confirm takes an integer, a string and a record, asks
// one question, and answers with the arguments it ran with; nothing takes
// no arguments and asks too.
const confirmManifest = `{"name":"t","build":{"morloc_version":"1.2.3"},
 "pools":[{"lang":"py","exec":["python3","pool.py"]}],
 "commands":[
  {"name":"confirm","type":"remote","mid":1,"pool":0,"needed_pools":[0],"desc":["Ask, then echo"],
   "args":[{"kind":"pos","schema":"j","type":"Int","name":"n","desc":["n"]},
           {"kind":"pos","schema":"s","type":"Str","name":"s","desc":["s"]},
           {"kind":"pos","schema":"m21aaj1bf8","type":"Opts","name":"opts","desc":["opts"]}],
   "return":{"schema":"s","type":"Str","desc":[]}},
  {"name":"nothing","type":"remote","mid":2,"pool":0,"needed_pools":[0],"desc":["Ask, no arguments"],
   "args":[],"return":{"schema":"s","type":"Str","desc":[]}}]}`

// confirmPool asks "Go on?" under the key "go", then returns the
// arguments it got, joined.
type confirmPool struct{}

func (confirmPool) Call(ctx context.Context, c argmap.Call, h CallHooks) (ndarray.Value, error) {
	if _, err := h.Ask(ctx, Question{Kind: "elicit", Key: "go", Params: json.RawMessage(`{"message":"Go on?","requestedSchema":{"type":"object","properties":{}}}`)}); err != nil {
		return ndarray.Value{}, err
	}
	args, _ := c.JSONArgs()
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = string(a)
	}
	b, _ := json.Marshal(strings.Join(parts, " "))
	return ndarray.Value{JSON: b}, nil
}

// An MRTR retry is bound to the value of its arguments, not their bytes
// (issue 18 §4): a client or proxy that writes them again in another key
// order, with other space and escapes, or a number in another form, gets
// its call completed; any other value, however close, is refused.
func TestRetryBoundToArgumentsValue(t *testing.T) {
	srv := NewServer(Implementation{Name: "t", Version: "1.2.3"}, toolsOf(t, confirmManifest), confirmPool{}, Options{Logger: quietLogger()})
	const first = `{"n":9007199254740993,"s":"caf\u00e9","opts":{"a":[1,2],"b":0.5}}`
	ans := `"inputResponses":{"go":{"action":"accept","content":{}}}`
	state := func(tool, args string) string {
		t.Helper()
		r := mrtrResult(t, mrtrCall(t, srv, allCaps, `"name":"`+tool+`","arguments":`+args))
		if r["resultType"] != "input_required" {
			t.Fatalf("round 1 of %s %s: %v", tool, args, r)
		}
		return r["requestState"].(string)
	}
	st := state("confirm", first)
	accepted := []struct{ name, args string }{
		{"the same bytes", first},
		{"keys reordered, space added", "{ \"opts\" : { \"b\" : 0.5 ,\n \"a\" : [ 1 , 2 ] } ,\t\"s\" : \"café\" , \"n\" : 9007199254740993 }"},
		{"escapes and number forms", `{"\u006e":9007199254740993e0,"s":"\u0063af\u00E9","opts":{"b":5e-1,"a":[1.0,20E-1]}}`},
	}
	for _, c := range accepted {
		got := mrtrCall(t, srv, allCaps, `"name":"confirm","arguments":`+c.args+`,`+ans+`,"requestState":"`+st+`"`)
		if text := completeText(t, got); !strings.HasPrefix(text, `9007199254740993 "café" {"a":[1,2],"b":`) {
			t.Errorf("%s: %q", c.name, text)
		}
	}
	refused := []struct{ name, args string }{
		{"an integer one beyond 2^53 away", `{"n":9007199254740992,"s":"café","opts":{"a":[1,2],"b":0.5}}`},
		{"a string", `{"n":9007199254740993,"s":"cafe","opts":{"a":[1,2],"b":0.5}}`},
		{"a list's order", `{"n":9007199254740993,"s":"café","opts":{"a":[2,1],"b":0.5}}`},
		{"a real close by", `{"n":9007199254740993,"s":"café","opts":{"a":[1,2],"b":0.50000000000000000001}}`},
	}
	for _, c := range refused {
		got := mrtrCall(t, srv, allCaps, `"name":"confirm","arguments":`+c.args+`,`+ans+`,"requestState":"`+st+`"`)
		e, ok := got["error"].(map[string]any)
		if !ok || e["code"].(float64) != CodeInvalidParams || !strings.Contains(e["message"].(string), "other arguments") {
			t.Errorf("%s: %v, want -32602 for other arguments", c.name, got)
		}
	}
	// No arguments, {} and null are one call.
	for _, first := range []string{`{}`, `null`, ` { } `} {
		st := state("nothing", first)
		for _, retry := range []string{`,"arguments":{}`, `,"arguments":null`, ``} {
			got := mrtrCall(t, srv, allCaps, `"name":"nothing"`+retry+`,`+ans+`,"requestState":"`+st+`"`)
			if r := mrtrResult(t, got); r["resultType"] != "complete" {
				t.Errorf("arguments %s, retried with %q: %v", first, retry, got)
			}
		}
	}
}
