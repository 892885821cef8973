package mcp

import (
	"context"
	"strings"
	"testing"
)

const serverMeta = `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"t","version":"1.2.3"}}`

// Transcripts of the 2026-07-28 era: each request alone, in a fresh session
// and in one opened with initialize (a request with _meta is served
// statelessly whatever the session), and through HandleStateless.
func TestStatelessTranscripts(t *testing.T) {
	const supported = `["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]`
	tests := []struct {
		name, line, want string
	}{
		{"discover",
			`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta("2026-07-28", `,"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}`) + `}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":` + supported + `,"capabilities":{"tools":{}},"ttlMs":60000,"cacheScope":"public","resultType":"complete",` + serverMeta + `}}`},
		{"discover without _meta",
			`{"jsonrpc":"2.0","id":2,"method":"server/discover"}`,
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"invalid params: server/discover requires params._meta[\"io.modelcontextprotocol/protocolVersion\"] (protocol 2026-07-28 has no handshake)"}}`},
		{"unknown version",
			`{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{` + meta("1900-01-01", "") + `}}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"unsupported protocol version: 1900-01-01","data":{"supported":` + supported + `,"requested":"1900-01-01"}}}`},
		{"a handshake version in _meta",
			`{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{` + meta("2025-06-18", "") + `}}`,
			`{"jsonrpc":"2.0","id":"x","error":{"code":-32022,"message":"unsupported protocol version: 2025-06-18","data":{"supported":` + supported + `,"requested":"2025-06-18"}}}`},
		{"version not a string",
			`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728,"io.modelcontextprotocol/clientCapabilities":{}}}}`,
			`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"invalid params: params._meta[\"io.modelcontextprotocol/protocolVersion\"] must be a string"}}`},
		{"capabilities without version",
			`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}`,
			`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"invalid params: tools/list requires params._meta[\"io.modelcontextprotocol/protocolVersion\"] (protocol 2026-07-28 has no handshake)"}}`},
		{"version without capabilities",
			`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"add","arguments":{"_1":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
			`{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"invalid params: tools/call requires params._meta[\"io.modelcontextprotocol/clientCapabilities\"] (an object)"}}`},
		{"bad log level",
			`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{` + meta("2026-07-28", `,"io.modelcontextprotocol/logLevel":"loud"`) + `}}`,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"invalid params: params._meta[\"io.modelcontextprotocol/logLevel\"] must be one of [debug info notice warning error critical alert emergency]"}}`},
		{"no ping",
			`{"jsonrpc":"2.0","id":8,"method":"ping","params":{` + meta("2026-07-28", "") + `}}`,
			`{"jsonrpc":"2.0","id":8,"error":{"code":-32601,"message":"method not found: ping (protocol 2026-07-28)"}}`},
		{"no logging/setLevel",
			`{"jsonrpc":"2.0","id":9,"method":"logging/setLevel","params":{"level":"debug",` + meta("2026-07-28", "") + `}}`,
			`{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"method not found: logging/setLevel (protocol 2026-07-28)"}}`},
		{"no initialize",
			`{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":"2026-07-28",` + meta("2026-07-28", "") + `}}`,
			`{"jsonrpc":"2.0","id":10,"error":{"code":-32601,"message":"method not found: initialize (protocol 2026-07-28)"}}`},
		{"call",
			`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"rec","arguments":{},` + meta("2026-07-28", "") + `}}`,
			`{"jsonrpc":"2.0","id":11,"result":{"content":[{"type":"text","text":"{\"name\":\"Ada\",\"age\":36}"}],"structuredContent":{"name":"Ada","age":36},"isError":false,"resultType":"complete",` + serverMeta + `}}`},
		{"failing call",
			`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"boom",` + meta("2026-07-28", "") + `}}`,
			`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"ValueError: boom"}],"isError":true,"resultType":"complete",` + serverMeta + `}}`},
		{"unknown tool",
			`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"fireball",` + meta("2026-07-28", "") + `}}`,
			`{"jsonrpc":"2.0","id":13,"error":{"code":-32602,"message":"unknown tool 'fireball'"}}`},
	}
	srv := newTestServer(t, &fakePool{}, Options{CacheTTL: 60e9})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fresh := srv.NewSession(nil)
			defer fresh.Close()
			if got := reply(t, fresh, tt.line); got != tt.want {
				t.Errorf("fresh session:\n got %s\nwant %s", got, tt.want)
			}
			legacy := initialized(t, srv, "2025-06-18", nil)
			if got := reply(t, legacy, tt.line); got != tt.want {
				t.Errorf("initialized session:\n got %s\nwant %s", got, tt.want)
			}
			if got := marshal(t, srv.HandleStateless(context.Background(), req(t, tt.line), nil)); got != tt.want {
				t.Errorf("HandleStateless:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// tools/list in 2026-07-28: every tool, every member, in manifest order,
// with the cache hints; the same bytes every time.
func TestStatelessToolsList(t *testing.T) {
	srv := newTestServer(t, &fakePool{}, Options{})
	line := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta("2026-07-28", "") + `}}`
	ss := srv.NewSession(nil)
	defer ss.Close()
	got := reply(t, ss, line)
	for _, want := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"add","title":"Add One","description":"Add one",`,
		`"annotations":{"title":"Add One","readOnlyHint":true,"idempotentHint":true}}`,
		`"outputSchema":{"type":"object"`,
		`],"ttlMs":3600000,"cacheScope":"public","resultType":"complete",` + serverMeta + `}}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("tools/list lacks %s\n%s", want, got)
		}
	}
	names := []string{"add", "rec", "slow", "steps", "boom", "pic", "late"}
	last := -1
	for _, n := range names {
		i := strings.Index(got, `"name":"`+n+`"`)
		if i < last {
			t.Errorf("%s out of manifest order", n)
		}
		last = i
	}
	if again := reply(t, ss, line); again != got {
		t.Errorf("tools/list differs between calls")
	}
}
