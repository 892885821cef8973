package e2e

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// scrape sends a request to path of srv with headers (name, value, ...)
// and returns the status and the body.
func scrape(t *testing.T, srv *httpServer, method, path, body string, headers ...string) (int, string) {
	t.Helper()
	resp, b := mustExchange(t, method, srv.base+path, body, headers...)
	return resp.StatusCode, b
}

// waitForSample waits until a series of srv's /metrics reaches want.
func waitForSample(t *testing.T, srv *httpServer, series string, want float64, headers ...string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, page := scrape(t, srv, http.MethodGet, "/metrics", "", headers...)
		if sample(page, series) >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not reach %v within 60s:\n%s", series, want, page)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func sample(page, series string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(page)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// nexus serve's GET /metrics (docs/deploy.md, "Metrics"), with real Python
// pools: calls by outcome, a timeout, a pool that crashes and is restarted,
// and the same auth as the rest; --metrics=false turns it off.
func TestMetricsEndpoint(t *testing.T) {
	testenv.NeedPython(t)
	srv := startHTTP(t, []string{"NEXUS_AUTH_TOKEN=tok"}, "serve", "--port", "0", "--timeout", "1s", program("bad/unruly"))
	auth := []string{"Authorization", "Bearer tok"}
	started := `nexus_pool_events_total{event="started",lang="py"}`
	for _, c := range []struct {
		path, body string
		status     int
		// the pool starts before the call: its 1s timeout counts the
		// wait for a pool, which on a loaded machine can take longer
		startsFirst float64
	}{
		{"/call/unruly/ok", `[1]`, 200, 1},
		{"/call/unruly/ok", `[2]`, 200, 0},
		{"/call/unruly/fail", `["boom"]`, 500, 0},
		{"/call/unruly/slow", `[5000]`, 502, 0}, // times out after 1s
		{"/call/unruly/crash", `[3]`, 502, 0},   // its pool dies and is restarted
		{"/call/unruly/ok", `[3]`, 200, 2},      // on the new process
	} {
		if c.startsFirst > 0 {
			waitForSample(t, srv, started, c.startsFirst, auth...)
		}
		if code, body := scrape(t, srv, http.MethodPost, c.path, c.body, auth...); code != c.status {
			t.Fatalf("POST %s %s: %d %s, want %d", c.path, c.body, code, body, c.status)
		}
	}
	if resp, body := srv.rpc(statelessCallBody(1, "ok", `{"_1":5}`, ""), statelessHeaders("ok", auth...)...); resp.StatusCode != 200 || !strings.Contains(body, `"text":"6"`) {
		t.Fatalf("MCP tools/call ok: %d %s", resp.StatusCode, body)
	}

	if code, _ := scrape(t, srv, http.MethodGet, "/metrics", ""); code != http.StatusUnauthorized {
		t.Errorf("GET /metrics without the token: %d, want 401", code)
	}
	code, page := scrape(t, srv, http.MethodGet, "/metrics", "", auth...)
	if code != 200 {
		t.Fatalf("GET /metrics: %d\n%s", code, page)
	}
	for series, want := range map[string]float64{
		`nexus_calls_total{outcome="ok",program="unruly",tool="ok"}`:         4, // three on /call, one over MCP
		`nexus_calls_total{outcome="isError",program="unruly",tool="fail"}`:  1,
		`nexus_calls_total{outcome="timeout",program="unruly",tool="slow"}`:  1,
		`nexus_calls_total{outcome="isError",program="unruly",tool="crash"}`: 1,
		`nexus_pool_events_total{event="crashed",lang="py"}`:                 1,
		`nexus_pool_events_total{event="restarted",lang="py"}`:               1,
		`nexus_pool_events_total{event="started",lang="py"}`:                 2,
		`nexus_calls_in_flight{program="unruly"}`:                            0,
		`nexus_call_duration_seconds_count{program="unruly",tool="ok"}`:      4,
	} {
		if got := sample(page, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	if got := sample(page, `nexus_http_requests_total{code="200"}`); got < 4 {
		t.Errorf(`nexus_http_requests_total{code="200"} = %v, want at least 4`, got)
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", page)
	}

	off := startHTTP(t, nil, "serve", "--port", "0", "--metrics=false", program("bad/unruly"))
	if code, _ := scrape(t, off, http.MethodGet, "/metrics", ""); code != http.StatusNotFound {
		t.Errorf("GET /metrics with --metrics=false: %d, want 404", code)
	}
}
