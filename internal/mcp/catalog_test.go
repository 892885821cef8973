package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// The catalog's fixture: a program (in a temporary directory, for its
// files) with a file resource, templates whose commands return a string, a
// record, content blocks and bytes, a file result, a completer, declared
// and computed prompts; catalogPool plays its functions.

const catalogManifest = `{"name":"cat","build":{"morloc_version":"1.2.3"},
 "pools":[{"lang":"py","exec":["python3","pool.py"],"metadata":{"runtime":"nexus"}}],
 "commands":[
  {"name":"stats","type":"remote","mid":1,"pool":0,"needed_pools":[0],"desc":["Stats"],
   "args":[{"kind":"pos","schema":"s","type":"Str","name":"sample","desc":["The sample"]}],
   "return":{"schema":"s","type":"Str","desc":[]},
   "metadata":{"resource":{"uriTemplate":"stats://{sample}","mimeType":"text/plain"},"completions":{"sample":{"completer":"names"}}}},
  {"name":"double","type":"remote","mid":2,"pool":0,"needed_pools":[0],"desc":["Twice n, as a record"],
   "args":[{"kind":"pos","schema":"j","type":"Int","name":"n","desc":["n"]},{"kind":"flag","short":"l","long":"loud","default":"false","desc":["Loud"]}],
   "return":{"schema":"m11nj","type":"R","desc":[]},
   "metadata":{"resource":{"uriTemplate":"double://{n}","title":"Doubles"},"tool":false}},
  {"name":"blocks","type":"remote","mid":3,"pool":0,"needed_pools":[0],"desc":["Blocks"],"args":[],
   "return":{"schema":"s","type":"Str","desc":[]},"metadata":{"resource":{"uriTemplate":"blocks://all"}}},
  {"name":"pixel","type":"remote","mid":4,"pool":0,"needed_pools":[0],"desc":["A pixel"],"args":[],
   "return":{"schema":"s","type":"Str","desc":[],"mime":"image/png"},"metadata":{"resource":{"uriTemplate":"pixel://red"}}},
  {"name":"names","type":"remote","mid":5,"pool":0,"needed_pools":[0],"desc":["Names"],
   "args":[{"kind":"pos","schema":"s","type":"Str","name":"prefix","desc":[]}],
   "return":{"schema":"as","type":"[Str]","desc":[]},"metadata":{"tool":false}},
  {"name":"plot","type":"remote","mid":6,"pool":0,"needed_pools":[0],"desc":["Write a file"],
   "args":[{"kind":"pos","schema":"s","type":"Str","name":"path","desc":[]}],
   "return":{"schema":"s","type":"Str","desc":[]},"metadata":{"result":"file","mimeType":"image/png"}},
  {"name":"explain","type":"remote","mid":7,"pool":0,"needed_pools":[0],"desc":["Explain a sample"],
   "args":[{"kind":"pos","schema":"s","type":"Str","name":"sample","desc":["Which"]},{"kind":"pos","schema":"j","type":"Int","name":"depth","desc":["How deep"]}],
   "return":{"schema":"s","type":"Str","desc":[]},"metadata":{"prompt":true,"tool":false}},
  {"name":"chat","type":"remote","mid":8,"pool":0,"needed_pools":[0],"desc":["A conversation"],"args":[],
   "return":{"schema":"a*","type":"[Message]","desc":[]},"metadata":{"prompt":{"name":"conversation","title":"Chat"}}},
  {"name":"asks","type":"remote","mid":9,"pool":0,"needed_pools":[0],"desc":["Ask first"],"args":[],
   "return":{"schema":"s","type":"Str","desc":[]},"metadata":{"prompt":true,"tool":false}}],
 "metadata":{
  "resources":[{"uri":"notes://today","path":"notes.txt","title":"Notes","description":"Today"},
               {"uri":"img://dot","path":"dot.png"}],
  "prompts":[{"name":"look","title":"Look","description":"Look at a sample",
    "arguments":[{"name":"sample","title":"Sample","required":true,"completer":"names"},{"name":"mood","values":["calm","cheerful","curious"]}],
    "messages":[{"content":{"type":"text","text":"Look at {sample}, {mood}."}},
                {"role":"assistant","content":{"type":"resource","uri":"stats://{sample}"}},
                {"content":{"type":"image","path":"dot.png"}}]}]}}`

// catalogProgram writes the fixture's program and returns its manifest.
func catalogProgram(t testing.TB) *manifest.Manifest { return catalogProgramOf(t, catalogManifest) }

// catalogProgramOf writes the fixture's program with manifest text text.
func catalogProgramOf(t testing.TB, text string) *manifest.Manifest {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"manifest.json": text, "notes.txt": "buy milk\n", "dot.png": "\x89PNG\r\n\x1a\n\x00"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := manifest.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

type catalogPool struct{ outside string }

func (p *catalogPool) Call(ctx context.Context, c argmap.Call, h CallHooks) (ndarray.Value, error) {
	args, err := c.JSONArgs()
	if err != nil {
		return ndarray.Value{}, err
	}
	str := func(i int) string {
		var s string
		_ = json.Unmarshal(args[i], &s)
		return s
	}
	val := func(v any) (ndarray.Value, error) {
		b, err := json.Marshal(v)
		return ndarray.Value{JSON: b}, err
	}
	switch c.Command.Name {
	case "stats":
		if str(0) == "broken" {
			return ndarray.Value{}, raised{"ValueError: no sample named broken"}
		}
		return val("stats of " + str(0))
	case "double":
		var n int
		_ = json.Unmarshal(args[0], &n)
		return val(map[string]int{"n": 2 * n})
	case "blocks":
		h.Content(json.RawMessage(`[{"type":"text","text":"one"},{"type":"image","data":"AAAA","mimeType":"image/png"}]`))
		return ndarray.Value{JSON: json.RawMessage("null")}, nil
	case "pixel":
		return val(base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n")))
	case "names":
		var out []string
		for _, n := range []string{"control", "treated", "treated-late"} {
			if strings.HasPrefix(n, str(0)) {
				out = append(out, n)
			}
		}
		if str(0) == "many" {
			for i := range 150 {
				out = append(out, fmt.Sprintf("many-%03d", i))
			}
		}
		return val(out)
	case "plot":
		path := str(0)
		if path != "" && !filepath.IsAbs(path) {
			path = filepath.Join(p.outside, path)
		}
		if err := os.WriteFile(path, []byte("\x89PNG\r\n\x1a\nplot"), 0o644); err != nil {
			return ndarray.Value{}, err
		}
		return val(str(0))
	case "explain":
		return val("Explain " + str(0) + " to depth " + string(args[1]))
	case "chat":
		return val([]any{map[string]any{"role": "user", "content": "Hello"}, map[string]any{"role": "assistant", "content": map[string]string{"type": "text", "text": "Hi"}}})
	case "asks":
		name, err := askName(ctx, h, "who", "Who asks?")
		if err != nil {
			return ndarray.Value{}, err
		}
		return val("Asked by " + name)
	}
	return ndarray.Value{}, fmt.Errorf("no function %s", c.Command.Name)
}

// newCatalogServer serves the fixture program; the output directory and
// the pool's relative paths are outDir.
func newCatalogServer(t testing.TB, opts Options) (*Server, *manifest.Manifest) {
	t.Helper()
	m := catalogProgram(t)
	tools, excl := argmap.Tools(m)
	if len(excl) > 0 {
		t.Fatalf("exclusions: %v", excl)
	}
	cat, err := NewCatalog([]CatalogProgram{{Manifest: m, Tools: tools}})
	if err != nil {
		t.Fatal(err)
	}
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	if opts.OutputDir == "" {
		opts.OutputDir = t.TempDir()
	}
	srv := NewServerFor(Surface{Info: Implementation{Name: "cat", Version: "1"}, Tools: tools, Caller: &catalogPool{outside: m.Dir}, Catalog: cat}, opts)
	return srv, m
}

// call sends one request line in a session and returns the reply.
func call(t *testing.T, ss *Session, method, params string) string {
	t.Helper()
	return reply(t, ss, `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`)
}

// statelessParams wraps params members as a 2026-07-28 request's.
func statelessParams(members string) string {
	if members != "" {
		members += ","
	}
	return "{" + members + meta("2026-07-28", "") + "}"
}

func TestCatalogResources(t *testing.T) {
	srv, m := newCatalogServer(t, Options{PageSize: 1})
	ss := initialized(t, srv, "2025-11-25", nil)
	notes := filepath.Join(m.ProgramDir(), "notes.txt")
	tests := []struct {
		name, method, params, want string
	}{
		{"first page", "resources/list", `{}`,
			`{"resources":[{"uri":"notes://today","name":"notes.txt","title":"Notes","description":"Today","mimeType":"text/plain","size":9}],"nextCursor":`},
		{"static text", "resources/read", `{"uri":"notes://today"}`, `{"contents":[{"uri":"notes://today","mimeType":"text/plain","text":"buy milk\n"}]}`},
		{"static binary", "resources/read", `{"uri":"img://dot"}`, `{"contents":[{"uri":"img://dot","mimeType":"image/png","blob":"iVBORw0KGgoA"}]}`},
		{"a string template", "resources/read", `{"uri":"stats://treated"}`, `{"contents":[{"uri":"stats://treated","mimeType":"text/plain","text":"stats of treated"}]}`},
		{"a percent-encoded variable", "resources/read", `{"uri":"stats://a%20b"}`, `{"contents":[{"uri":"stats://a%20b","mimeType":"text/plain","text":"stats of a b"}]}`},
		{"a record template (an Int variable; the flag's default)", "resources/read", `{"uri":"double://21"}`, `{"contents":[{"uri":"double://21","mimeType":"application/json","text":"{\"n\":42}"}]}`},
		{"content blocks", "resources/read", `{"uri":"blocks://all"}`, `{"contents":[{"uri":"blocks://all","mimeType":"text/plain","text":"one"},{"uri":"blocks://all","mimeType":"image/png","blob":"AAAA"}]}`},
		{"bytes", "resources/read", `{"uri":"pixel://red"}`, `{"contents":[{"uri":"pixel://red","mimeType":"image/png","blob":"iVBORw0KGgo="}]}`},
		{"templates", "resources/templates/list", `{}`, `{"resourceTemplates":[{"uriTemplate":"stats://{sample}","name":"stats","description":"Stats","mimeType":"text/plain"}],"nextCursor":`},
		{"an unknown URI", "resources/read", `{"uri":"nope://x"}`,
			`"error":{"code":-32602,"message":"unknown resource 'nope://x': it is none of this server's resources and matches none of its resource templates","data":{"uri":"nope://x"}}`},
		{"an empty variable", "resources/read", `{"uri":"stats://"}`, `"code":-32602`},
		{"a variable of the wrong type", "resources/read", `{"uri":"double://many"}`,
			`"error":{"code":-32602,"message":"resource 'double://many' (template double://{n}): argument 'n' of 'double': expected an integer, got \"many\"","data":{"uri":"double://many"}}`},
		{"a function that fails", "resources/read", `{"uri":"stats://broken"}`, `"error":{"code":-32603,"message":"resource 'stats://broken': ValueError: no sample named broken"}`},
		{"no uri", "resources/read", `{}`, `"error":{"code":-32602,"message":"invalid resources/read params: missing uri (a string)"}`},
		{"a foreign cursor", "resources/list", `{"cursor":"nx1.abc"}`, `"code":-32602,"message":"invalid params: unknown or stale cursor`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := call(t, ss, tt.method, tt.params); !strings.Contains(got, tt.want) {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	// The cursor leads to the second page, which is the last.
	var page struct {
		Result struct {
			NextCursor string `json:"nextCursor"`
		} `json:"result"`
	}
	_ = json.Unmarshal([]byte(call(t, ss, "resources/list", `{}`)), &page)
	got := call(t, ss, "resources/list", `{"cursor":"`+page.Result.NextCursor+`"}`)
	if !strings.Contains(got, `"uri":"img://dot"`) || strings.Contains(got, "nextCursor") {
		t.Errorf("the second page: %s", got)
	}
	// A template's cursor is no resources/list cursor.
	_ = json.Unmarshal([]byte(call(t, ss, "resources/templates/list", `{}`)), &page)
	if got := call(t, ss, "resources/list", `{"cursor":"`+page.Result.NextCursor+`"}`); !strings.Contains(got, "stale cursor") {
		t.Errorf("a templates cursor on resources/list: %s", got)
	}
	// A file replaced by a link out of the program is no longer served.
	if err := os.Remove(notes); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", notes); err != nil {
		t.Fatal(err)
	}
	if got := call(t, ss, "resources/read", `{"uri":"notes://today"}`); !strings.Contains(got, `"code":-32602`) || !strings.Contains(got, "no longer serves it") {
		t.Errorf("a file turned into a link out: %s", got)
	}
}

// In 2026-07-28 every list and read carries the caching hints and the
// result type (SEP-2549): a read, whose file may change, is never fresh.
func TestCatalogStateless(t *testing.T) {
	srv, _ := newCatalogServer(t, Options{})
	for _, tt := range []struct{ method, params, want string }{
		{"resources/list", ``, `,"ttlMs":0,"cacheScope":"public","resultType":"complete"`}, // a function may add a file
		{"resources/templates/list", ``, `,"ttlMs":3600000,"cacheScope":"public","resultType":"complete"`},
		{"prompts/list", ``, `,"ttlMs":3600000,"cacheScope":"public","resultType":"complete"`},
		{"resources/read", `"uri":"notes://today"`, `"text":"buy milk\n"}],"ttlMs":0,"cacheScope":"public","resultType":"complete"`},
		{"prompts/get", `"name":"look","arguments":{"sample":"a"}`, `"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo"`},
		{"completion/complete", `"ref":{"type":"ref/prompt","name":"look"},"argument":{"name":"mood","value":"c"}`, `{"completion":{"values":["calm","cheerful","curious"],"total":3,"hasMore":false},"resultType":"complete"`},
	} {
		resp := srv.HandleStateless(context.Background(), req(t, `{"jsonrpc":"2.0","id":1,"method":"`+tt.method+`","params":`+statelessParams(tt.params)+`}`), nil)
		if got := marshal(t, resp); !strings.Contains(got, tt.want) {
			t.Errorf("%s:\n got  %s\n want %s", tt.method, got, tt.want)
		}
	}
}

func TestCatalogPrompts(t *testing.T) {
	srv, _ := newCatalogServer(t, Options{})
	ss := initialized(t, srv, "2025-11-25", nil)
	tests := []struct {
		name, params, want string
	}{
		{"declared, with arguments, a computed resource and an image", `{"name":"look","arguments":{"sample":"treated","mood":"calm"}}`,
			`{"description":"Look at a sample","messages":[{"role":"user","content":{"type":"text","text":"Look at treated, calm."}},` +
				`{"role":"assistant","content":{"type":"resource","resource":{"uri":"stats://treated","mimeType":"text/plain","text":"stats of treated"}}},` +
				`{"role":"user","content":{"type":"image","data":"iVBORw0KGgoA","mimeType":"image/png"}}]}`},
		{"an optional argument left out is empty", `{"name":"look","arguments":{"sample":"x"}}`, `"text":"Look at x, ."`},
		{"a missing required argument", `{"name":"look","arguments":{"mood":"calm"}}`,
			`"error":{"code":-32602,"message":"missing required argument 'sample' of prompt 'look'","data":{"argument":"sample"}}`},
		{"an argument that is no string", `{"name":"look","arguments":{"sample":1}}`, `must be a string (prompt arguments are strings), got number`},
		{"an unknown argument", `{"name":"look","arguments":{"sample":"x","colour":"red"}}`, `unexpected argument 'colour' of prompt 'look' (its arguments: sample, mood)`},
		{"an embedded resource whose function fails", `{"name":"look","arguments":{"sample":"broken"}}`,
			`"error":{"code":-32603,"message":"prompt 'look': embedded resource 'stats://broken': ValueError: no sample named broken"}`},
		{"computed, one text", `{"name":"explain","arguments":{"sample":"control","depth":"2"}}`,
			`{"description":"Explain a sample","messages":[{"role":"user","content":{"type":"text","text":"Explain control to depth 2"}}]}`},
		{"computed, an argument of the wrong type", `{"name":"explain","arguments":{"sample":"control","depth":"deep"}}`,
			`"code":-32602,"message":"prompt 'explain': argument 'depth' of 'explain': expected an integer, got \"deep\""`},
		{"computed, a required argument missing", `{"name":"explain","arguments":{"sample":"control"}}`, `missing required argument 'depth' of prompt 'explain'`},
		{"computed, messages", `{"name":"conversation"}`,
			`"messages":[{"role":"user","content":{"type":"text","text":"Hello"}},{"role":"assistant","content":{"text":"Hi","type":"text"}}]`}, // a block passes as the function wrote it
		{"an unknown prompt", `{"name":"nope"}`, `"error":{"code":-32602,"message":"unknown prompt 'nope' (prompts/list lists them)"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := call(t, ss, "prompts/get", tt.params); !strings.Contains(got, tt.want) {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	got := call(t, ss, "prompts/list", `{}`)
	for _, want := range []string{
		`{"name":"look","title":"Look","description":"Look at a sample","arguments":[{"name":"sample","title":"Sample","required":true},{"name":"mood","required":false}]}`,
		`{"name":"explain","description":"Explain a sample","arguments":[{"name":"sample","description":"Which","required":true},{"name":"depth","description":"How deep","required":true}]}`,
		`{"name":"conversation","title":"Chat","description":"A conversation","arguments":[]}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("prompts/list %s\nlacks %s", got, want)
		}
	}
	// Before 2025-06-18 nothing has a title.
	old := initialized(t, srv, "2025-03-26", nil)
	if got := call(t, old, "prompts/list", `{}`); strings.Contains(got, `"title"`) {
		t.Errorf("2025-03-26 prompts/list shows titles: %s", got)
	}
}

// A computed prompt whose function asks the user: in 2026-07-28 prompts/get
// answers input_required, and the retry with the answer and the state gets
// the messages (SEP-2322: MRTR is not only for tools/call).
func TestCatalogPromptMRTR(t *testing.T) {
	srv, _ := newCatalogServer(t, Options{})
	caps := `,"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}`
	line := func(extra string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"asks"` + extra +
			`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"` + caps + `}}}`
	}
	first := marshal(t, srv.HandleStateless(context.Background(), req(t, line("")), nil))
	var r struct {
		Result struct {
			ResultType    string                     `json:"resultType"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  string                     `json:"requestState"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(first), &r); err != nil || r.Result.ResultType != "input_required" || r.Result.InputRequests["who"] == nil {
		t.Fatalf("first round: %s", first)
	}
	retry := line(`,"inputResponses":{"who":{"action":"accept","content":{"name":"Ada"}}},"requestState":"` + r.Result.RequestState + `"`)
	if got := marshal(t, srv.HandleStateless(context.Background(), req(t, retry), nil)); !strings.Contains(got, `"text":"Asked by Ada"}}],"resultType":"complete"`) {
		t.Errorf("the retry: %s", got)
	}
	// The state is the prompt's: a tool cannot use it.
	wrong := `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"explain","arguments":{"sample":"a","depth":"1"},"requestState":"` + r.Result.RequestState +
		`","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"` + caps + `}}}`
	if got := marshal(t, srv.HandleStateless(context.Background(), req(t, wrong), nil)); !strings.Contains(got, "requestState was made for") {
		t.Errorf("the state on another prompt: %s", got)
	}
	// In the handshake era the same function asks with a server request.
	c := &fakeClient{answer: acceptName("Bo")}
	ss := initializedWith(t, srv, "2025-11-25", `{"elicitation":{}}`, c)
	if got := call(t, ss, "prompts/get", `{"name":"asks"}`); !strings.Contains(got, `"text":"Asked by Bo"`) {
		t.Errorf("handshake era: %s", got)
	}
}

func TestCatalogCompletion(t *testing.T) {
	srv, _ := newCatalogServer(t, Options{})
	ss := initialized(t, srv, "2025-11-25", nil)
	complete := func(ref, arg, value string) string {
		return call(t, ss, "completion/complete", `{"ref":`+ref+`,"argument":{"name":"`+arg+`","value":"`+value+`"}}`)
	}
	look := `{"type":"ref/prompt","name":"look"}`
	tests := []struct{ name, got, want string }{
		{"values, by prefix, any case", complete(look, "mood", "C"), `{"completion":{"values":["calm","cheerful","curious"],"total":3,"hasMore":false}}`},
		{"values, narrowed", complete(look, "mood", "ch"), `"values":["cheerful"],"total":1`},
		{"a completer", complete(look, "sample", "tr"), `"values":["treated","treated-late"],"total":2,"hasMore":false`},
		{"a completer's list is capped at 100", complete(look, "sample", "many"), `"total":150,"hasMore":true`},
		{"a template variable's completer", complete(`{"type":"ref/resource","uri":"stats://{sample}"}`, "sample", "c"), `"values":["control"]`},
		{"an Int variable has no values", complete(`{"type":"ref/resource","uri":"double://{n}"}`, "n", ""), `"values":[],"total":0`},
		{"a computed prompt's argument without values", complete(`{"type":"ref/prompt","name":"explain"}`, "sample", "x"), `"values":[],"total":0`},
		{"an unknown argument", complete(look, "colour", ""), `"error":{"code":-32602,"message":"prompt 'look' has no argument 'colour' (its arguments: sample, mood)"}`},
		{"an unknown variable", complete(`{"type":"ref/resource","uri":"stats://{sample}"}`, "n", ""), `resource template 'stats://{sample}' has no variable 'n' (its variables: sample)`},
		{"an unknown template", complete(`{"type":"ref/resource","uri":"x://{y}"}`, "y", ""), `unknown resource template 'x://{y}'`},
		{"an unknown ref type", complete(`{"type":"ref/tool","name":"x"}`, "y", ""), `ref.type must be \"ref/prompt\" or \"ref/resource\"`},
	}
	for _, tt := range tests {
		if !strings.Contains(tt.got, tt.want) {
			t.Errorf("%s:\n got  %s\n want %s", tt.name, tt.got, tt.want)
		}
	}
	if got := complete(look, "sample", "many"); strings.Count(got, `"many-`) != 100 {
		t.Errorf("the capped list has %d values, want 100", strings.Count(got, `"many-`))
	}
}

// A command whose result is a file: the call answers a resource_link (a
// text naming its URI before 2025-06-18), the file is listed and readable,
// sessions that listed resources hear of it; a file outside the served
// directories is refused.
func TestCatalogFileResult(t *testing.T) {
	out := t.TempDir()
	srv, m := newCatalogServer(t, Options{OutputDir: out})
	rec := &recorder{}
	ss := initialized(t, srv, "2025-11-25", rec.notify)
	other := &recorder{}
	bystander := initialized(t, srv, "2025-11-25", other.notify)
	call(t, ss, "resources/list", `{}`)
	call(t, bystander, "resources/list", `{}`)
	silent := &recorder{}
	initialized(t, srv, "2025-11-25", silent.notify) // never listed resources

	plotted := filepath.Join(out, "fig one.png")
	got := call(t, ss, "tools/call", `{"name":"plot","arguments":{"path":"`+plotted+`"}}`)
	link := `{"type":"resource_link","uri":"nexus://cat/output/fig%20one.png","name":"fig one.png","description":"A file the function wrote; read it with resources/read","mimeType":"image/png","size":12}`
	if !strings.Contains(got, `"content":[`+link+`],"isError":false`) {
		t.Fatalf("tools/call plot: %s\nwant %s", got, link)
	}
	if got := call(t, ss, "resources/read", `{"uri":"nexus://cat/output/fig%20one.png"}`); !strings.Contains(got, `"mimeType":"image/png","blob":"`+base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nplot"))+`"`) {
		t.Errorf("reading the plot: %s", got)
	}
	if got := call(t, ss, "resources/list", `{}`); !strings.Contains(got, `{"uri":"nexus://cat/output/fig%20one.png","name":"fig one.png"`) {
		t.Errorf("resources/list lacks the plot: %s", got)
	}
	changed := `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`
	for name, r := range map[string]*recorder{"the caller": rec, "a session that listed": other} {
		if msgs := r.all(); len(msgs) != 1 || msgs[0] != changed {
			t.Errorf("%s heard %v, want one list_changed", name, msgs)
		}
	}
	if msgs := silent.all(); len(msgs) != 0 {
		t.Errorf("a session that never listed heard %v", msgs)
	}
	// The same file again: no new resource, no news.
	call(t, ss, "tools/call", `{"name":"plot","arguments":{"path":"`+plotted+`"}}`)
	if msgs := rec.all(); len(msgs) != 1 {
		t.Errorf("a file written again: %v", msgs)
	}
	// A relative path is the pool's: the program's directory here.
	if got := call(t, ss, "tools/call", `{"name":"plot","arguments":{"path":"mine.png"}}`); !strings.Contains(got, `"uri":"nexus://cat/files/mine.png"`) {
		t.Errorf("a file in the program's directory: %s", got)
	}
	// Outside every served directory: an isError result, nothing served.
	elsewhere := filepath.Join(t.TempDir(), "x.png")
	got = call(t, ss, "tools/call", `{"name":"plot","arguments":{"path":"`+elsewhere+`"}}`)
	if !strings.Contains(got, `"isError":true`) || !strings.Contains(got, "which is outside the directories nexus serves files from ("+out+", "+m.ProgramDir()+")") {
		t.Errorf("a file outside: %s", got)
	}
	// Before 2025-06-18 there are no resource links: the URI as text.
	old := initialized(t, srv, "2025-03-26", nil)
	if got := call(t, old, "tools/call", `{"name":"plot","arguments":{"path":"`+plotted+`"}}`); !strings.Contains(got, `"content":[{"type":"text","text":"nexus://cat/output/fig%20one.png"}]`) {
		t.Errorf("2025-03-26: %s", got)
	}
}

// Subscriptions: a handshake session hears of changes to a subscribed file
// until it unsubscribes; a 2026-07-28 subscriptions/listen stream is
// acknowledged first, then carries the same notifications with its id,
// and ends with a result when nexus stops.
func TestCatalogSubscriptions(t *testing.T) {
	srv, m := newCatalogServer(t, Options{WatchDebounce: 20 * time.Millisecond})
	notes := filepath.Join(m.ProgramDir(), "notes.txt")
	rec := &recorder{}
	ss := initialized(t, srv, "2025-11-25", rec.notify)
	waitFor := func(r *recorder, n int) []string {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for len(r.all()) < n && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		return r.all()
	}
	if got := call(t, ss, "resources/subscribe", `{"uri":"notes://today"}`); got != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("subscribe: %s", got)
	}
	if got := call(t, ss, "resources/subscribe", `{"uri":"nope://x"}`); !strings.Contains(got, `"code":-32602`) || !strings.Contains(got, `"data":{"uri":"nope://x"}`) {
		t.Errorf("subscribing to nothing: %s", got)
	}
	if err := os.WriteFile(notes, []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	updated := `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"notes://today"}}`
	if msgs := waitFor(rec, 1); len(msgs) != 1 || msgs[0] != updated {
		t.Fatalf("after a change: %v", msgs)
	}

	// A listen stream.
	stream := &recorder{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan string, 1)
	listen := `{"jsonrpc":"2.0","id":"L1","method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["notes://today","nope://x","stats://a"],"resourcesListChanged":true,"toolsListChanged":true},` + meta("2026-07-28", "") + `}}`
	go func() { done <- marshal(t, srv.HandleStateless(ctx, req(t, listen), stream.notify)) }()
	ack := `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"},"notifications":{"resourcesListChanged":true,"resourceSubscriptions":["notes://today"]}}}`
	if msgs := waitFor(stream, 1); len(msgs) != 1 || msgs[0] != ack {
		t.Fatalf("the stream's first message: %v\nwant %s", msgs, ack)
	}
	if err := os.Remove(notes); err != nil {
		t.Fatal(err)
	}
	streamed := `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"},"uri":"notes://today"}}`
	if msgs := waitFor(stream, 2); len(msgs) != 2 || msgs[1] != streamed {
		t.Errorf("the stream after a deletion: %v", msgs)
	}
	if msgs := waitFor(rec, 2); len(msgs) != 2 || msgs[1] != updated {
		t.Errorf("the session after a deletion: %v", msgs)
	}
	// A function adding a file reaches the stream that asked for list changes.
	call(t, ss, "tools/call", `{"name":"plot","arguments":{"path":"new.png"}}`)
	if msgs := waitFor(stream, 3); len(msgs) != 3 || !strings.Contains(msgs[2], `"method":"notifications/resources/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"}}`) {
		t.Errorf("the stream after a new file: %v", msgs)
	}

	if got := call(t, ss, "resources/unsubscribe", `{"uri":"notes://today"}`); got != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Errorf("unsubscribe: %s", got)
	}
	srv.EndSubscriptions()
	select {
	case got := <-done:
		if !strings.Contains(got, `"id":"L1","result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"cat","version":"1"},"io.modelcontextprotocol/subscriptionId":"L1"}}`) {
			t.Errorf("the stream's end: %s", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("EndSubscriptions did not end the stream")
	}
	cancel()
	// Unsubscribed and ended: a change reaches no one.
	if err := os.WriteFile(notes, []byte("again"), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(rec.all()); n != 2 {
		t.Errorf("after unsubscribing the session heard %v", rec.all())
	}
	srv.subs.mu.Lock()
	idle := srv.subs.watcher == nil && len(srv.subs.byURI) == 0
	srv.subs.mu.Unlock()
	if !idle {
		t.Error("the watcher outlived the last subscription")
	}
}

// Capabilities follow what the program has, in every era.
func TestCatalogCapabilities(t *testing.T) {
	srv, _ := newCatalogServer(t, Options{})
	for version, want := range map[string]string{
		"2025-06-18": `"capabilities":{"completions":{},"prompts":{"listChanged":false},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":false}}`,
		"2025-11-25": `"capabilities":{"completions":{},"logging":{},"prompts":{"listChanged":false},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":false}}`,
	} {
		ss := srv.NewSession(nil)
		got := reply(t, ss, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{}}}`)
		ss.Close()
		if !strings.Contains(got, want) {
			t.Errorf("%s: %s\nwant %s", version, got, want)
		}
	}
	got := marshal(t, srv.HandleStateless(context.Background(), req(t, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":`+statelessParams("")+`}`), nil))
	if want := `"capabilities":{"completions":{},"prompts":{},"resources":{"listChanged":true,"subscribe":true},"tools":{}}`; !strings.Contains(got, want) {
		t.Errorf("server/discover: %s\nwant %s", got, want)
	}
	// A hidden command is no tool.
	ss := initialized(t, srv, "2025-11-25", nil)
	if got := call(t, ss, "tools/call", `{"name":"names","arguments":{"prefix":""}}`); !strings.Contains(got, `"message":"unknown tool 'names'"`) {
		t.Errorf("calling a command that is no tool: %s", got)
	}
	if got := call(t, ss, "tools/list", `{}`); strings.Contains(got, `"name":"names"`) || !strings.Contains(got, `"name":"stats"`) {
		t.Errorf("tools/list: %s", got)
	}
}

func TestNewCatalogRefuses(t *testing.T) {
	m := catalogProgram(t)
	tools, _ := argmap.Tools(m)
	withoutPlot := []*argmap.Tool{}
	for _, tl := range tools {
		if tl.Name != "plot" {
			withoutPlot = append(withoutPlot, tl)
		}
	}
	if _, err := NewCatalog([]CatalogProgram{{Manifest: m, Tools: withoutPlot}}); err == nil ||
		!strings.Contains(err.Error(), `at commands[5].metadata.result: command "plot" returns a file, but it is not served`) {
		t.Errorf("a file result that is no tool: %v", err)
	}
	if _, err := NewCatalog([]CatalogProgram{{Manifest: m, Tools: tools}, {Manifest: m, Tools: tools, Prefix: "b__"}}); err == nil ||
		!strings.Contains(err.Error(), `resource "notes://today" is served by another program too`) {
		t.Errorf("two programs, one URI: %v", err)
	}
	for _, tt := range []struct{ name, old, new, want string }{
		{"a completer returning integers", // the completer must take one string and return strings
			`"return":{"schema":"as","type":"[Str]"`, `"return":{"schema":"aj","type":"[Int]"`,
			"completer names must return a list of strings ([Str]), not [Int]"},
		{"a template missing a required argument",
			`"uriTemplate":"stats://{sample}"`, `"uriTemplate":"stats://all"`,
			`stats needs its argument "sample", which the template "stats://all" does not give`},
	} {
		bad := strings.Replace(catalogManifest, tt.old, tt.new, 1)
		if bad == catalogManifest {
			t.Fatalf("%s: the fixture has no %s", tt.name, tt.old)
		}
		bm := catalogProgramOf(t, bad)
		btools, _ := argmap.Tools(bm)
		if _, err := NewCatalog([]CatalogProgram{{Manifest: bm, Tools: btools}}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}
