package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestInitializeNegotiation(t *testing.T) {
	tests := []struct{ asked, want string }{
		{"2024-11-05", "2024-11-05"},
		{"2025-03-26", "2025-03-26"},
		{"2025-06-18", "2025-06-18"},
		{"2025-11-25", "2025-11-25"},
		{"2099-01-01", LatestVersion},
		{"1.0", LatestVersion},
		{"", LatestVersion},
		// 2026-07-28 has no handshake: an initialize asking for it gets the latest handshake version.
		{StatelessVersion, LatestVersion},
	}
	srv := newTestServer(t, &fakePool{}, Options{})
	for _, tt := range tests {
		t.Run(tt.asked, func(t *testing.T) {
			ss := srv.NewSession(nil)
			defer ss.Close()
			got := reply(t, ss, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+tt.asked+`","capabilities":{}}}`)
			// docs/spec.md §4.2's result, tools alone, up to 2025-06-18 (as
			// morloc's manual shows it); from 2025-11-25 also logging. This
			// program has no prompts or resources, so none are declared.
			caps := `{"tools":{"listChanged":false}}`
			if tt.want >= "2025-11-25" {
				caps = `{"logging":{},"tools":{"listChanged":false}}`
			}
			want := `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"` + tt.want + `","capabilities":` + caps + `,"serverInfo":{"name":"t","version":"1.2.3"}}}`
			if got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
			if ss.Version() != tt.want || !ss.Initialized() {
				t.Errorf("session version %q initialized %v", ss.Version(), ss.Initialized())
			}
		})
	}
}

// What a tool and a call show depends on the negotiated version.
func TestFeaturesByVersion(t *testing.T) {
	tests := []struct {
		version                                      string
		title, annotations, outputSchema, structured bool
		progressMessage                              bool
	}{
		{"2024-11-05", false, false, false, false, false},
		{"2025-03-26", false, true, false, false, true},
		{"2025-06-18", true, true, true, true, true},
		{"2025-11-25", true, true, true, true, true},
	}
	srv := newTestServer(t, &fakePool{}, Options{})
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			rec := &recorder{}
			ss := initialized(t, srv, tt.version, rec.notify)
			list := reply(t, ss, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			var res struct {
				Result struct {
					Tools []map[string]json.RawMessage `json:"tools"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(list), &res); err != nil || len(res.Result.Tools) != 7 {
				t.Fatalf("tools/list: %s", list)
			}
			add, rec2 := res.Result.Tools[0], res.Result.Tools[1]
			check := func(what string, got, want bool) {
				t.Helper()
				if got != want {
					t.Errorf("%s present = %v, want %v\n%s", what, got, want, list)
				}
			}
			_, hasTitle := add["title"]
			_, hasAnn := add["annotations"]
			_, hasOut := rec2["outputSchema"]
			check("title", hasTitle, tt.title)
			check("annotations", hasAnn, tt.annotations)
			check("outputSchema", hasOut, tt.outputSchema)
			if hasAnn && string(add["annotations"]) != `{"title":"Add One","readOnlyHint":true,"idempotentHint":true}` {
				t.Errorf("annotations %s", add["annotations"])
			}
			for _, k := range []string{"ttlMs", "cacheScope", "resultType"} {
				if strings.Contains(list, `"`+k+`"`) {
					t.Errorf("handshake-era tools/list has %s: %s", k, list)
				}
			}

			call := reply(t, ss, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"rec","arguments":{}}}`)
			check("structuredContent", strings.Contains(call, `"structuredContent":{"name":"Ada","age":36}`), tt.structured)
			if strings.Contains(call, "resultType") {
				t.Errorf("handshake-era call has resultType: %s", call)
			}

			reply(t, ss, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"steps","arguments":{"_1":[1]},"_meta":{"progressToken":"p"}}}`)
			msgs := rec.all()
			if len(msgs) != 1 {
				t.Fatalf("notifications %v", msgs)
			}
			check("progress message", strings.Contains(msgs[0], `"message":"at 1"`), tt.progressMessage)
		})
	}
}

func TestIsStateless(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"server/discover"}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta("2026-07-28", "") + `}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":1}}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`, false},
	}
	for _, tt := range tests {
		if got := IsStateless(req(t, tt.line)); got != tt.want {
			t.Errorf("IsStateless(%s) = %v", tt.line, got)
		}
	}
	if v, ok := RequestVersion(req(t, tests[1].line)); !ok || v != "2026-07-28" {
		t.Errorf("RequestVersion = %q, %v", v, ok)
	}
	if !IsInitialize(req(t, tests[5].line)) || IsInitialize(req(t, tests[4].line)) {
		t.Error("IsInitialize")
	}
}
