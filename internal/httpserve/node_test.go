package httpserve

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// With a node id, the sessions a node mints carry it as a prefix (so a
// balancer can pin them) and every response names the node; without one,
// neither.
func TestNodeID(t *testing.T) {
	for _, tc := range []struct {
		node   string
		idRE   string
		header string
	}{
		{"", `^[0-9a-f]{64}$`, ""},
		{"n1", `^n1\.[0-9a-f]{64}$`, "n1"},
		{"eu-west_2", `^eu-west_2\.[0-9a-f]{64}$`, "eu-west_2"},
	} {
		t.Run("node="+tc.node, func(t *testing.T) {
			_, ts, _ := newTestServer(t, Config{NodeID: tc.node})
			if id := initialize(t, ts); !regexp.MustCompile(tc.idRE).MatchString(id) {
				t.Errorf("session id %q, want %s", id, tc.idRE)
			}
			for _, r := range []struct{ method, path, body string }{
				{http.MethodPost, "/mcp", statelessBody(1, "tools/call", `"name":"addInt","arguments":{"_1":1}`)},
				{http.MethodPost, "/call/shapes/addInt", `[1]`},
				{http.MethodGet, "/health", ""},
				{http.MethodGet, "/nowhere", ""},
			} {
				headers := []string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "addInt", "Accept", "application/json"}
				resp := do(t, ts, r.method, r.path, r.body, headers...)
				readBody(t, resp)
				if got := resp.Header.Values("Nexus-Node"); strings.Join(got, ",") != tc.header {
					t.Errorf("%s %s: Nexus-Node %q, want %q", r.method, r.path, got, tc.header)
				}
			}
		})
	}
}

func TestNodeIDChecked(t *testing.T) {
	for id, ok := range map[string]bool{
		"n1": true, "node-2": true, "A_b": true, "": true, strings.Repeat("x", maxNodeID): true,
		"n.1": false, "n 1": false, "n/1": false, "nœud": false, strings.Repeat("x", maxNodeID+1): false,
	} {
		c := Config{NodeID: id}
		c.setDefaults()
		if err := c.check(); (err == nil) != ok {
			t.Errorf("node id %q: check() = %v, want ok=%v", id, err, ok)
		}
	}
}
