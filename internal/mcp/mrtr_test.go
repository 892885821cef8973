package mcp

import (
	"strings"
	"testing"
)

// An MRTR retry is bound to the value of its arguments, not their bytes: a
// client or proxy that writes them again in another key order, with other
// space and escapes, or a number in another form, gets its call completed;
// any other value, however close, is refused.
func TestRetryBoundToArgumentsValue(t *testing.T) {
	srv := newFixtureServer(t, confirmManifest, newFakePool(), Options{})
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
