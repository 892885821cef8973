package e2e

import (
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// confirmArgs is a program written for TestMRTRRetryReserialised: one
// Python function of an integer and a record that asks the client before
// it answers with the integer it got.
const confirmArgsManifest = `{"name":"confirmargs","build":{"morloc_version":"0"},
 "pools":[{"lang":"py","exec":["python3","pools/py/pool.py"],"metadata":{"runtime":"nexus"}}],
 "commands":[
  {"name":"confirm","type":"remote","mid":1,"pool":0,"needed_pools":[0],"desc":["Ask, then answer with n"],
   "args":[{"kind":"pos","schema":"j","type":"Int","name":"n","desc":["n"]},
           {"kind":"pos","schema":"m21aaj1bf8","type":"Opts","name":"opts","desc":["opts"]}],
   "return":{"schema":"s","type":"Str","desc":[]}}]}`

const confirmArgsPool = `import nexus


def confirm(n, opts):
    answer = nexus.elicit("Go on with %d?" % n, {"type": "object", "properties": {"ok": {"type": "boolean"}}})
    return "%s %d %s %s" % (answer["action"], n, opts["a"], opts["b"])


nexus.serve({1: confirm})
`

// An MRTR retry that a client or proxy wrote again — its arguments' members
// in another order, other space, other escapes — completes the call; a retry
// whose arguments hold another value, here an integer one away beyond 2^53,
// is refused. Over HTTP, to the real binary and a real Python pool.
func TestMRTRRetryReserialised(t *testing.T) {
	testenv.NeedPython(t)
	dir := writeProgram(t, map[string]string{"manifest.json": confirmArgsManifest, "pools/py/pool.py": confirmArgsPool})
	srv := startHTTP(t, nil, "serve", "--port", "0", dir)
	headers := statelessHeaders("confirm")
	call := func(args, extra string) string {
		if extra != "" {
			extra += ","
		}
		_, body := srv.rpc(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"confirm","arguments":`+args+`,`+extra+
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`, headers...)
		return body
	}
	res, retry := mrtrRound(t, call(`{"n":9007199254740993,"opts":{"a":[1,2],"b":0.5}}`, ""), func(string) string {
		return `{"action":"accept","content":{"ok":true}}`
	})
	if res["resultType"] != "input_required" || retry == "" {
		t.Fatalf("round 1: %v", res)
	}
	rewritten := "{ \"opts\" : {\n  \"b\" : 5e-1,\n  \"a\" : [ 1 , 2 ]\n },\n \"\\u006e\" : 9007199254740993 }"
	res, _ = mrtrRound(t, call(rewritten, retry), nil)
	if text := strings.Join(contentTexts(res), ""); res["resultType"] != "complete" || text != `"accept 9007199254740993 [1, 2] 0.5"` {
		t.Errorf("the retry written again: %v", res)
	}
	refused := call(`{"n":9007199254740992,"opts":{"a":[1,2],"b":0.5}}`, retry)
	if !strings.Contains(refused, `"code":-32602`) || !strings.Contains(refused, "made for other arguments") {
		t.Errorf("a retry with n one away: %s", refused)
	}
}

// contentTexts are the text blocks of a tools/call result.
func contentTexts(res map[string]any) []string {
	var out []string
	blocks, _ := res["content"].([]any)
	for _, b := range blocks {
		if m, ok := b.(map[string]any); ok && m["type"] == "text" {
			s, _ := m["text"].(string)
			out = append(out, s)
		}
	}
	return out
}
