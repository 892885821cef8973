package httpserve

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/metrics"
)

// metricValue reads one sample from a /metrics page: name{labels} value.
func metricValue(t *testing.T, page, series string) float64 {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`)
	m := re.FindStringSubmatch(page)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatalf("%s: %v", series, err)
	}
	return v
}

// GET /metrics (docs/deploy.md, "Metrics"): calls by program, tool and
// outcome over MCP and /call, their latency, calls in flight, sessions and
// HTTP statuses, behind the same auth as every other endpoint.
func TestMetrics(t *testing.T) {
	_, ts, _ := newTestServer(t, Config{AuthToken: "tok", Metrics: metrics.New()})
	auth := []string{"Authorization", "Bearer tok"}
	mcpCall := func(name, args string) {
		t.Helper()
		h := append([]string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", name}, auth...)
		resp := post(t, ts, "/mcp", statelessBody(1, "tools/call", `"name":"`+name+`","arguments":`+args), h...)
		readBody(t, resp)
	}
	mcpCall("addInt", `{"_1":41}`)
	mcpCall("addInt", `{"_1":1}`)
	mcpCall("fail", `{"_1":"boom"}`)
	mcpCall("addInt", `{"_1":"forty"}`) // invalid arguments: -32602
	mcpCall("noSuchTool", `{}`)
	for _, c := range []struct {
		path, body string
		status     int
	}{
		{"/call/shapes/addInt", `[1]`, 200},
		{"/call/shapes/fail", `["boom"]`, 500},
		{"/call/shapes/addInt", `["x"]`, 400},
	} {
		if resp := post(t, ts, c.path, c.body, auth...); resp.StatusCode != c.status {
			t.Fatalf("%s %s: %d, want %d", c.path, c.body, resp.StatusCode, c.status)
		}
	}
	initialize(t, ts, auth...)

	if resp := do(t, ts, http.MethodGet, "/metrics", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /metrics without the token: %d, want 401", resp.StatusCode)
	}
	resp := do(t, ts, http.MethodGet, "/metrics", "", auth...)
	page := readBody(t, resp)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), page)
	}
	for series, want := range map[string]float64{
		`nexus_calls_total{outcome="ok",program="shapes",tool="addInt"}`:             3, // two over MCP, one on /call
		`nexus_calls_total{outcome="isError",program="shapes",tool="fail"}`:          2,
		`nexus_calls_total{outcome="protocol_error",program="shapes",tool="addInt"}`: 2,
		`nexus_calls_total{outcome="protocol_error",program="",tool=""}`:             1, // a name that is no tool
		`nexus_call_duration_seconds_count{program="shapes",tool="addInt"}`:          5,
		`nexus_calls_in_flight{program="shapes"}`:                                    0,
		`nexus_sessions`:                        1,
		`nexus_http_requests_total{code="200"}`: 7, // 5 MCP calls (errors are 200 too), /call ok, initialize
		`nexus_http_requests_total{code="401"}`: 1,
	} {
		if got := metricValue(t, page, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	if !strings.Contains(page, "go_goroutines") || !strings.Contains(page, "process_resident_memory_bytes") {
		t.Errorf("no Go or process metrics:\n%.2000s", page)
	}
}

// Without Config.Metrics there is no /metrics.
func TestMetricsOff(t *testing.T) {
	_, ts, _ := newTestServer(t, Config{})
	if resp := do(t, ts, http.MethodGet, "/metrics", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics with metrics off: %d, want 404", resp.StatusCode)
	}
}
