package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// Bad input to resources and prompts: each gets a clear error (what was
// wrong, where, what was expected), and the server serves on.

// badInputManifest is a small Python program written for these tests: a
// file resource, a template whose variable is an Int, and a prompt with a
// required argument.
const badInputManifest = `{"name":"badinput","build":{"morloc_version":"0"},
 "pools":[{"lang":"py","exec":["python3","pools/py/pool.py"],"metadata":{"runtime":"nexus"}}],
 "commands":[
  {"name":"count","type":"remote","mid":1,"pool":0,"needed_pools":[0],"desc":["The integers below n"],
   "args":[{"kind":"pos","schema":"j","type":"Int","name":"n","desc":["How many"]}],
   "return":{"schema":"aj","type":"[Int]","desc":[]},
   "metadata":{"resource":{"uriTemplate":"count://{n}","mimeType":"application/json"}}}],
 "metadata":{
  "resources":[{"uri":"notes://today","path":"notes.txt","description":"Today's notes"}],
  "prompts":[{"name":"greet","arguments":[{"name":"who","required":true}],
   "messages":[{"role":"user","content":{"type":"text","text":"Say hello to {who}."}}]}]}}`

const badInputPool = `import nexus
nexus.serve({1: lambda n: list(range(n))})
`

func errData(m msg) map[string]any {
	e, _ := m["error"].(map[string]any)
	d, _ := e["data"].(map[string]any)
	return d
}

func resultText(t *testing.T, m msg) string {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("expected a result, got %v", m)
	}
	contents, _ := res["contents"].([]any)
	if len(contents) != 1 {
		t.Fatalf("expected one contents item, got %v", m)
	}
	text, _ := contents[0].(map[string]any)["text"].(string)
	return text
}

func TestResourcesBadInput(t *testing.T) {
	if why := testenv.PythonMissing(); why != "" {
		t.Skip(why)
	}
	dir := writeProgram(t, map[string]string{
		"manifest.json":    badInputManifest,
		"pools/py/pool.py": badInputPool,
		"notes.txt":        "buy milk\n",
	})
	s := startServer(t, dir)
	s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}`)
	if r := s.recv(); r["result"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	// A URI outside every template (and no resource): -32602 with the URI
	// in data (SEP-2164); then a good read.
	r := s.request(1, "resources/read", map[string]any{"uri": "other://x"})
	if errCode(r) != -32602 || errData(r)["uri"] != "other://x" || !strings.Contains(errMessage(r), "matches none of its resource templates") {
		t.Errorf("a URI outside every template: %v", r)
	}
	if got := resultText(t, s.request(2, "resources/read", map[string]any{"uri": "count://3"})); got != "[0,1,2]" {
		t.Errorf("count://3 = %q", got)
	}

	// A template variable that is not of its argument's type: -32602
	// naming the argument, the command and what was expected.
	r = s.request(3, "resources/read", map[string]any{"uri": "count://three"})
	if want := `argument 'n' of 'count': expected an integer, got "three"`; errCode(r) != -32602 || !strings.Contains(errMessage(r), want) || errData(r)["uri"] != "count://three" {
		t.Errorf("count://three: %v, want -32602 saying %s", r, want)
	}
	if got := resultText(t, s.request(4, "resources/read", map[string]any{"uri": "count://2"})); got != "[0,1]" {
		t.Errorf("count://2 after the bad one = %q", got)
	}

	// A prompt without its required argument, with a number for it, with
	// an argument it does not have: -32602 naming the argument each time.
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "missing required argument 'who' of prompt 'greet'"},
		{map[string]any{"who": 5}, "argument 'who' of prompt 'greet' must be a string"},
		{map[string]any{"who": "Ada", "whom": "Bob"}, "unexpected argument 'whom' of prompt 'greet' (its arguments: who)"},
	} {
		r = s.request(5, "prompts/get", map[string]any{"name": "greet", "arguments": tc.args})
		if errCode(r) != -32602 || !strings.Contains(errMessage(r), tc.want) {
			t.Errorf("prompts/get greet %v: %v, want -32602 saying %q", tc.args, r, tc.want)
		}
	}
	r = s.request(6, "prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"who": "Ada"}})
	if b, _ := json.Marshal(r["result"]); !strings.Contains(string(b), `"text":"Say hello to Ada."`) {
		t.Errorf("prompts/get greet Ada: %v", r)
	}

	// A file deleted while subscribed: the subscriber hears of it, reading
	// it is a clear error, the rest serves on, and the file coming back is
	// heard too.
	if r = s.request(7, "resources/subscribe", map[string]any{"uri": "notes://today"}); r["result"] == nil {
		t.Fatalf("subscribe: %v", r)
	}
	if err := os.Remove(filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	awaitUpdated(t, s, "notes://today")
	r = s.request(8, "resources/read", map[string]any{"uri": "notes://today"})
	if errCode(r) != -32602 || errData(r)["uri"] != "notes://today" || !strings.Contains(errMessage(r), "no such file") {
		t.Errorf("reading the deleted file: %v, want -32602 saying there is no such file", r)
	}
	if got := resultText(t, s.request(9, "resources/read", map[string]any{"uri": "count://1"})); got != "[0]" {
		t.Errorf("a template after the deletion = %q", got)
	}
	if r = s.request(10, "resources/list", nil); r["result"] == nil {
		t.Errorf("resources/list after the deletion: %v", r)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("buy bread\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	awaitUpdated(t, s, "notes://today")
	if got := resultText(t, s.request(11, "resources/read", map[string]any{"uri": "notes://today"})); got != "buy bread\n" {
		t.Errorf("the file written again = %q", got)
	}
	// A template's URI has no file to watch.
	r = s.request(12, "resources/subscribe", map[string]any{"uri": "count://4"})
	if errCode(r) != -32602 || !strings.Contains(errMessage(r), "no file to watch") {
		t.Errorf("subscribing to a template's URI: %v", r)
	}
	if err := s.closeAndWait(); err != nil {
		t.Errorf("nexus exited with %v", err)
	}
}

// awaitUpdated reads until notifications/resources/updated for uri comes.
func awaitUpdated(t *testing.T, s *server, uri string) {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				t.Fatalf("nexus closed stdout; stderr:\n%s", s.stderr.String())
			}
			m := decode(t, string(line))
			if m["method"] != "notifications/resources/updated" {
				t.Fatalf("expected notifications/resources/updated, got %s", line)
			}
			if p, _ := m["params"].(map[string]any); p["uri"] != uri {
				t.Fatalf("updated %v, want %s", p, uri)
			}
			return
		case <-deadline:
			t.Fatalf("no notifications/resources/updated for %s; stderr:\n%s", uri, s.stderr.String())
		}
	}
}

// A program whose resource, prompt image or template is wrong is refused
// at load, by nexus mcp and nexus run alike, with the JSON path of the
// fault and what was expected.
func TestResourcesRefusedAtLoad(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("not the program's"), 0o644); err != nil {
		t.Fatal(err)
	}
	withResource := func(resource string) string {
		return strings.Replace(badInputManifest, `{"uri":"notes://today","path":"notes.txt","description":"Today's notes"}`, resource, 1)
	}
	cases := []struct {
		name     string
		manifest string
		link     string // notes.txt is a symbolic link to this, when set
		want     []string
	}{
		{"escapes through ..", withResource(`{"uri":"x://a","path":"../secret.txt"}`), "",
			[]string{"at metadata.resources[0].path", `"../secret.txt" leads outside the program's directory`}},
		{"escapes through a symbolic link", badInputManifest, outside,
			[]string{"at metadata.resources[0].path", "through a symbolic link to " + outside}},
		{"an absolute path", withResource(`{"uri":"x://a","path":"/etc/hostname"}`), "",
			[]string{"at metadata.resources[0].path", "expected a path relative to the manifest's directory"}},
		{"a missing file", withResource(`{"uri":"x://a","path":"nope.txt"}`), "",
			[]string{"at metadata.resources[0].path", `"nope.txt": no such file`}},
		{"a typo in a key", withResource(`{"uri":"x://a","path":"notes.txt","mimetype":"text/plain"}`), "",
			[]string{"at metadata.resources[0].mimetype", `unknown key "mimetype"`}},
		{"a prompt image outside", strings.Replace(badInputManifest, `{"type":"text","text":"Say hello to {who}."}`, `{"type":"image","path":"../secret.png","mimeType":"image/png"}`, 1), "",
			[]string{"at metadata.prompts[0].messages[0].content.path", "leads outside the program's directory"}},
		{"a placeholder naming no argument", strings.Replace(badInputManifest, "{who}.", "{whom}.", 1), "",
			[]string{"at metadata.prompts[0].messages[0].content.text", "placeholder {whom} names no argument", "(the prompt's arguments: who)"}},
		{"a template variable naming no argument", strings.Replace(badInputManifest, "count://{n}", "count://{m}", 1), "",
			[]string{"at commands[0].metadata.resource.uriTemplate", "variable {m} names no argument of count (its arguments: n)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"manifest.json": tc.manifest, "pools/py/pool.py": badInputPool}
			if tc.link == "" {
				files["notes.txt"] = "buy milk\n"
			}
			dir := writeProgram(t, files)
			if tc.link != "" {
				if err := os.Symlink(tc.link, filepath.Join(dir, "notes.txt")); err != nil {
					t.Fatal(err)
				}
			}
			for _, args := range [][]string{{"mcp", dir}, {"run", dir, "--mcp-resources"}} {
				_, stderr, code := runNexus(t, args...)
				if code == 0 {
					t.Errorf("nexus %s started", args[0])
				}
				for _, w := range tc.want {
					if !strings.Contains(stderr, w) {
						t.Errorf("nexus %s: stderr %q lacks %q", args[0], stderr, w)
					}
				}
			}
		})
	}
}
