package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// viewsManifest has a tool per view, one whose view its metadata turns
// off, and one returning nothing (no view).
var viewsManifest = fixtureManifest("v",
	remote{"series", "A series", []string{intArg}, returns("af8", "[Real]"), ""},
	remote{"rows", "Records", nil, returns("am24names3agej", "[Person]"), ""},
	remote{"grid", "A matrix", nil, returns("aaf8", "[[Real]]"), ""},
	remote{"person", "A record", nil, returns("m24names3agej", "Person"), `{"title":"One Person"}`},
	remote{"hello", "A string", nil, strRet, ""},
	remote{"count", "An Int as a table", nil, intRet, ""},
	remote{"plain", "No view", nil, returns("af8", "[Real]"), `{"view":false}`},
	remote{"raw", "Named view", nil, returns("af8", "[Real]"), `{"view":"json"}`},
	remote{"nothing", "Returns nothing", nil, returns("z", "()"), ""},
)

// viewsResults are what viewsCaller answers, by command.
var viewsResults = map[string]string{
	"series": `[1.5,2,3]`, "rows": `[{"name":"a","age":1},{"name":"b","age":2}]`, "grid": `[[1,2],[3,4]]`,
	"person": `{"name":"Ada","age":36}`, "hello": `"hi"`, "count": `7`, "plain": `[1]`, "raw": `[2]`, "nothing": `null`,
}

type viewsCaller struct{}

func (viewsCaller) Call(_ context.Context, c argmap.Call, _ CallHooks) (ndarray.Value, error) {
	return ndarray.Value{JSON: json.RawMessage(viewsResults[c.Command.Name])}, nil
}

const (
	appsCaps     = `{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`
	otherUICaps  = `{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html"]}}}`
	otherExtCaps = `{"extensions":{"example.org/other":{}}}`
)

func viewsServer(t *testing.T, opts Options) *Server {
	return newFixtureServer(t, viewsManifest, viewsCaller{}, opts)
}

// appsSession opens a handshake session declaring caps; it returns the session
// and the initialize reply.
func appsSession(t *testing.T, srv *Server, version, caps string) (*Session, string) {
	t.Helper()
	ss := srv.NewSession(nil)
	t.Cleanup(ss.Close)
	got := reply(t, ss, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":`+caps+`,"clientInfo":{"name":"c","version":"0"}}}`)
	if !strings.Contains(got, `"protocolVersion":"`+version+`"`) {
		t.Fatalf("initialize: %s", got)
	}
	return ss, got
}

// A client that does not declare the extension, with the MCP App type,
// sees what it saw before views existed: the same initialize result, tool
// list, resource list and call results, byte for byte, as a server with
// views off gives it.
func TestWithoutTheExtensionNothingChanges(t *testing.T) {
	on, off := viewsServer(t, Options{}), viewsServer(t, Options{NoViews: true})
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"series","arguments":{"_1":3}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"person","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"rows","arguments":{}}}`,
	}
	for _, version := range append(append([]string{}, handshakeVersions...), StatelessVersion) {
		for _, caps := range []string{`{}`, otherUICaps, otherExtCaps} {
			var sOn, sOff *Session
			if version != StatelessVersion {
				var initOn, initOff string
				sOn, initOn = appsSession(t, on, version, caps)
				sOff, initOff = appsSession(t, off, version, caps)
				if initOn != initOff {
					t.Errorf("%s %s: initialize\n%s\nwith views off\n%s", version, caps, initOn, initOff)
				}
			} else {
				sOn, sOff = on.NewSession(nil), off.NewSession(nil)
				t.Cleanup(sOn.Close)
				t.Cleanup(sOff.Close)
			}
			for _, line := range lines {
				if version == StatelessVersion {
					line = withStatelessMeta(t, line, caps)
				}
				a, b := reply(t, sOn, line), reply(t, sOff, line)
				if a != b {
					t.Errorf("%s %s %s:\n%s\nwith views off\n%s", version, caps, line, a, b)
				}
				if strings.Contains(a, "ui://") || strings.Contains(a, `"_meta":{"ui"`) || strings.Contains(a, `"error"`) {
					t.Errorf("%s %s %s: %s", version, caps, line, a)
				}
			}
		}
	}
}

// withStatelessMeta puts the 2026-07-28 _meta, declaring caps, into a
// request's params.
func withStatelessMeta(t *testing.T, line, caps string) string {
	t.Helper()
	var r map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatal(err)
	}
	params := map[string]json.RawMessage{}
	if r["params"] != nil {
		if err := json.Unmarshal(r["params"], &params); err != nil {
			t.Fatal(err)
		}
	}
	params["_meta"] = json.RawMessage(`{"io.modelcontextprotocol/protocolVersion":"` + StatelessVersion + `","io.modelcontextprotocol/clientCapabilities":` + caps + `}`)
	r["params"], _ = json.Marshal(params)
	b, _ := json.Marshal(r)
	return string(b)
}

// toolMetas returns each listed tool's _meta.ui.resourceUri ("" for none).
func toolMetas(t *testing.T, got string) map[string]string {
	t.Helper()
	var r struct {
		Result struct {
			Tools []struct {
				Name string
				Meta *struct {
					UI struct {
						ResourceURI string `json:"resourceUri"`
					} `json:"ui"`
				} `json:"_meta"`
			}
		}
	}
	if err := json.Unmarshal([]byte(got), &r); err != nil || len(r.Result.Tools) == 0 {
		t.Fatalf("tools/list: %v: %s", err, got)
	}
	out := map[string]string{}
	for _, tool := range r.Result.Tools {
		out[tool.Name] = ""
		if tool.Meta != nil {
			out[tool.Name] = tool.Meta.UI.ResourceURI
		}
	}
	return out
}

var wantViews = map[string]string{
	"series": "ui://v/series", "rows": "ui://v/rows", "grid": "ui://v/grid", "person": "ui://v/person",
	"hello": "ui://v/hello", "count": "ui://v/count", "plain": "", "raw": "ui://v/raw", "nothing": "",
}

// A client that declares the extension sees _meta.ui.resourceUri on each
// tool that has a view, in every protocol version, and the extension and
// resources among the server's capabilities.
func TestTheExtensionShowsEachToolsView(t *testing.T) {
	srv := viewsServer(t, Options{})
	for _, version := range handshakeVersions {
		ss, init := appsSession(t, srv, version, appsCaps)
		if !strings.Contains(init, `"extensions":{"io.modelcontextprotocol/ui":{}}`) || !strings.Contains(init, `"resources":{}`) {
			t.Errorf("%s: initialize %s", version, init)
		}
		got := toolMetas(t, reply(t, ss, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		if fmt.Sprint(got) != fmt.Sprint(wantViews) {
			t.Errorf("%s: views %v, want %v", version, got, wantViews)
		}
	}
	ss := srv.NewSession(nil)
	t.Cleanup(ss.Close)
	got := toolMetas(t, reply(t, ss, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":`+appsCaps+`}}}`))
	if fmt.Sprint(got) != fmt.Sprint(wantViews) {
		t.Errorf("stateless: views %v, want %v", got, wantViews)
	}
	// The _meta member is added last, after what the version shows.
	ssOld, _ := appsSession(t, srv, "2025-06-18", appsCaps)
	withMeta := reply(t, ssOld, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	plain := reply(t, initialized(t, srv, "2025-06-18", nil), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	for _, uri := range wantViews {
		withMeta = strings.Replace(withMeta, `,"_meta":{"ui":{"resourceUri":"`+uri+`"}}`, "", 1)
	}
	if withMeta != plain {
		t.Errorf("without its _meta members, the list differs:\n%s\n%s", withMeta, plain)
	}
}

// Every view is a resource of type text/html;profile=mcp-app, listed for
// a client shown views and readable by any.
func TestViewsAreResources(t *testing.T) {
	srv := viewsServer(t, Options{})
	ss, _ := appsSession(t, srv, "2025-11-25", appsCaps)
	list := reply(t, ss, `{"jsonrpc":"2.0","id":1,"method":"resources/list"}`)
	for _, uri := range wantViews {
		if uri != "" && !strings.Contains(list, `"uri":"`+uri+`","name":`) {
			t.Errorf("resources/list lacks %s: %s", uri, list)
		}
	}
	if n := strings.Count(list, `"mimeType":"text/html;profile=mcp-app"`); n != 7 {
		t.Errorf("%d views listed, want 7: %s", n, list)
	}
	for _, c := range []struct{ uri, kind string }{{"ui://v/series", "chart"}, {"ui://v/rows", "table"}, {"ui://v/grid", "heatmap"},
		{"ui://v/person", "record"}, {"ui://v/hello", "text"}, {"ui://v/count", "json"}, {"ui://v/raw", "json"}} {
		got := reply(t, ss, `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"`+c.uri+`"}}`)
		var r struct {
			Result struct {
				Contents []struct {
					URI, MimeType, Text string
					Meta                json.RawMessage `json:"_meta"`
				}
			}
		}
		if err := json.Unmarshal([]byte(got), &r); err != nil || len(r.Result.Contents) != 1 {
			t.Fatalf("%s: %v %.300s", c.uri, err, got)
		}
		v := r.Result.Contents[0]
		if v.URI != c.uri || v.MimeType != "text/html;profile=mcp-app" || !strings.HasPrefix(v.Text, "<!DOCTYPE html>") ||
			!strings.Contains(v.Text, `"kind":"`+c.kind+`"`) || string(v.Meta) != `{"ui":{"prefersBorder":true}}` {
			t.Errorf("%s: %s %s %q... %s", c.uri, v.URI, v.MimeType, v.Text[:min(40, len(v.Text))], v.Meta)
		}
		if len(v.Text) > 300*1024 || strings.Contains(v.Text, "http://") || strings.Contains(v.Text, "https://") {
			t.Errorf("%s: %d bytes, or holds a URL", c.uri, len(v.Text))
		}
		if c.uri == "ui://v/person" && !strings.Contains(v.Text, `"title":"One Person"`) {
			t.Errorf("%s: the tool's title is not in its view", c.uri)
		}
	}
	// Any client may read a view; none that is not there.
	plain := initialized(t, srv, "2025-11-25", nil)
	if got := reply(t, plain, `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"ui://v/series"}}`); !strings.Contains(got, `"mimeType":"text/html;profile=mcp-app"`) {
		t.Errorf("read by a client without the extension: %.200s", got)
	}
	for _, uri := range []string{"ui://v/plain", "ui://v/nothing", "ui://v/nope", "ui://other/series"} {
		if got := reply(t, ss, `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"`+uri+`"}}`); !strings.Contains(got, `"code":-32602`) {
			t.Errorf("%s: %s", uri, got)
		}
	}
	off := viewsServer(t, Options{NoViews: true})
	offSS, init := appsSession(t, off, "2025-11-25", appsCaps)
	if strings.Contains(init, "io.modelcontextprotocol/ui") {
		t.Errorf("views off, yet initialize declares them: %s", init)
	}
	if got := reply(t, offSS, `{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"ui://v/series"}}`); !strings.Contains(got, `"code":-32602`) {
		t.Errorf("views off, yet a view is read: %.200s", got)
	}
	if got := reply(t, offSS, `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`); strings.Contains(got, "ui://") {
		t.Errorf("views off, yet listed: %s", got)
	}
}

// A client shown views gets the data in structuredContent: a record as
// itself, anything else as {"result": value}; content keeps the text the
// model reads.
func TestResultsCarryTheirViewsData(t *testing.T) {
	srv := viewsServer(t, Options{})
	cases := []struct{ tool, sc string }{
		{"series", `{"result":[1.5,2,3]}`},
		{"rows", `{"result":[{"name":"a","age":1},{"name":"b","age":2}]}`},
		{"grid", `{"result":[[1,2],[3,4]]}`},
		{"person", `{"name":"Ada","age":36}`},
		{"hello", `{"result":"hi"}`},
		{"count", `{"result":7}`},
		{"raw", `{"result":[2]}`},
		{"plain", ``},
		{"nothing", ``},
	}
	for _, version := range []string{"2024-11-05", "2025-11-25", StatelessVersion} {
		var ss, plain *Session
		if version == StatelessVersion {
			ss, plain = srv.NewSession(nil), srv.NewSession(nil)
			t.Cleanup(ss.Close)
			t.Cleanup(plain.Close)
		} else {
			ss, _ = appsSession(t, srv, version, appsCaps)
			plain = initialized(t, srv, version, nil)
		}
		for _, c := range cases {
			line := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + c.tool + `","arguments":{"_1":3}}}`
			if c.tool != "series" {
				line = strings.Replace(line, `{"_1":3}`, `{}`, 1)
			}
			appsLine, plainLine := line, line
			if version == StatelessVersion {
				appsLine, plainLine = withStatelessMeta(t, line, appsCaps), withStatelessMeta(t, line, `{}`)
			}
			var got, before struct {
				Result CallToolResult
			}
			if err := json.Unmarshal([]byte(reply(t, ss, appsLine)), &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(reply(t, plain, plainLine)), &before); err != nil {
				t.Fatal(err)
			}
			if string(got.Result.StructuredContent) != c.sc {
				t.Errorf("%s %s: structuredContent %s, want %s", version, c.tool, got.Result.StructuredContent, c.sc)
			}
			if fmt.Sprint(got.Result.Content) != fmt.Sprint(before.Result.Content) || got.Result.IsError {
				t.Errorf("%s %s: content %v, without views %v", version, c.tool, got.Result.Content, before.Result.Content)
			}
		}
	}
}

// A metadata.view that cannot be used is refused when the program loads,
// with where it is.
func TestBadViewMetadataIsRefused(t *testing.T) {
	for _, c := range []struct{ ret, view, want string }{
		{returns("s", "Str"), `"chart"`, `commands[0].metadata.view: view "chart" does not fit f's result, Str`},
		{returns("af8", "[Real]"), `"pie"`, `commands[0].metadata.view: expected false (no view), true, or one of`},
	} {
		js := fixtureManifest("bad", remote{"f", "f", nil, c.ret, `{"view":` + c.view + `}`})
		m, err := manifest.Parse("/test/manifest.json", []byte(js))
		if err != nil {
			t.Fatal(err)
		}
		tools, _ := argmap.Tools(m)
		if _, err := NewCatalog([]CatalogProgram{{Manifest: m, Tools: tools}}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("view %s: %v, want %q", c.view, err, c.want)
		}
	}
}
