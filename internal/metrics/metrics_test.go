package metrics

import (
	"bytes"
	"compress/gzip"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the metrics package's golden files")

// scrape serves one GET /metrics with the request's headers (name, value,
// ...) and returns the response and its body, unzipped if it came gzipped.
func scrape(t *testing.T, m *Metrics, target string, headers ...string) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, req)
	resp := rec.Result()
	var body io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatalf("a gzipped page that is no gzip: %v", err)
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// recorded is a registry with one of every event nexus reports, label
// values that need escaping among them, and latencies on and beside the
// bucket bounds (a bound holds what equals it).
func recorded() *Metrics {
	m := New()
	for _, c := range []struct {
		program, tool, outcome string
		took                   time.Duration
	}{
		{"shapes", "addInt", "ok", 100 * time.Microsecond},
		{"shapes", "addInt", "ok", 101 * time.Microsecond},
		{"shapes", "addInt", "isError", 3 * time.Millisecond},
		{"shapes", "fail", "isError", 2 * time.Second},
		{"shapes", "slow", "timeout", 400 * time.Second},
		{"lab", "addInt", "ok", 0},
		{"lab", "addInt", "cancelled", 10 * time.Millisecond},
		{"", "", "protocol_error", time.Millisecond}, // no tool: no latency
		{"we\"ird\\prog\nram", "t", "ok", 42 * time.Millisecond},
	} {
		m.Call(c.program, c.tool, c.outcome, c.took)
	}
	m.CallStarted("shapes")
	m.CallStarted("shapes")
	m.CallEnded("shapes")
	m.CallStarted("lab")
	m.CallEnded("lab")
	m.PoolEvent("py", "started")
	m.PoolEvent("py", "crashed")
	m.PoolEvent("py", "restarted")
	m.PoolEvent("cpp", "started")
	m.Request(200)
	m.Request(200)
	m.Request(401)
	m.Request(500)
	m.AuthAccepted("bob")
	m.AuthAccepted("alice")
	m.AuthAccepted("alice")
	m.AuthRefused("expired")
	m.AuthRefused("audience")
	m.Sessions(func() int { return 7 })
	m.Sessions(func() int { return 3 }) // a later server's count replaces the first's
	return m
}

var (
	// goProcessSample is a sample of Go's or the process's own series:
	// its value (and go_info's version) depend on the moment.
	goProcessSample = regexp.MustCompile(`(?m)^((?:go|process)_\w+(?:\{[^}]*\})?) \S+$`)
	goVersion       = regexp.MustCompile(`go_info\{version="[^"]*"\}`)
	// runtimeHelp is a HELP line in the Go runtime's own words, which
	// change with Go's version.
	runtimeHelp = regexp.MustCompile(`(?m)^(# HELP go_\w+ ).* Sourced from (\S+)$`)
)

// stable masks what of a page changes from scrape to scrape or with Go's
// version: Go's and the process's values, Go's version, and the runtime's
// descriptions of its own metrics.
func stable(page string) string {
	page = goProcessSample.ReplaceAllString(page, "$1 X")
	page = goVersion.ReplaceAllString(page, `go_info{version="GO"}`)
	return runtimeHelp.ReplaceAllString(page, "$1(the runtime's description) Sourced from $2")
}

// The page is Prometheus's text format, exactly as documented in
// docs/deploy.md ("Metrics"): every family by name, its series by label
// values, histogram buckets cumulative with +Inf, label values escaped,
// Go's and the process's series beside nexus's (their values masked).
func TestExpositionGolden(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the process's series differ by system; the golden is Linux's")
	}
	resp, page := scrape(t, recorded(), "/metrics")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d", resp.StatusCode)
	}
	got := []byte(stable(page))
	const golden = "testdata/exposition.golden.txt"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the /metrics page differs from %s (go test -update rewrites it)\n--- got\n%s", golden, got)
	}
}

// The response's headers are Prometheus's text format's; the page comes
// gzipped when the scraper takes gzip (as Prometheus does), and plain when
// it does not, or refuses it.
func TestExpositionHeaders(t *testing.T) {
	m := recorded()
	_, plain := scrape(t, m, "/metrics")
	for _, c := range []struct {
		acceptEncoding string
		gzipped        bool
	}{
		{"", false},
		{"gzip", true},
		{"gzip, deflate, br", true},
		{"identity;q=0.5, gzip", true},
		{"gzip;q=0", false},
		{"*", false},
		{"br", false},
	} {
		resp, page := scrape(t, m, "/metrics", "Accept-Encoding", c.acceptEncoding)
		if got := resp.Header.Get("Content-Encoding") == "gzip"; got != c.gzipped {
			t.Errorf("Accept-Encoding %q: gzipped %v, want %v", c.acceptEncoding, got, c.gzipped)
		}
		if stable(page) != stable(plain) {
			t.Errorf("Accept-Encoding %q: another page:\n%s", c.acceptEncoding, page)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8; escaping=underscores" {
			t.Errorf("Content-Type %q", ct)
		}
		if vary := resp.Header.Values("Vary"); strings.Join(vary, ",") != "Accept,Accept-Encoding" {
			t.Errorf("Vary %q", vary)
		}
	}
}

// name[]=... keeps only the families named, as Prometheus's own handler
// does.
func TestExpositionNameFilter(t *testing.T) {
	_, page := scrape(t, recorded(), "/metrics?name[]=nexus_sessions&name[]=go_goroutines")
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(page), "\n") {
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			names = append(names, strings.Fields(rest)[0])
		}
	}
	if got := strings.Join(names, " "); got != "go_goroutines nexus_sessions" {
		t.Errorf("families %q, want go_goroutines nexus_sessions:\n%s", got, page)
	}
}

// A registry that has recorded nothing shows none of nexus's labelled
// families (a family without series is left out), and a nil *Metrics
// records nothing without failing.
func TestEmptyAndNil(t *testing.T) {
	_, page := scrape(t, New(), "/metrics")
	for _, name := range []string{"nexus_calls_total", "nexus_call_duration_seconds", "nexus_pool_events_total", "nexus_auth_requests_total", "nexus_sessions"} {
		if strings.Contains(page, name) {
			t.Errorf("an empty registry shows %s:\n%s", name, page)
		}
	}
	if !strings.Contains(page, "\ngo_goroutines ") || !strings.Contains(page, "\nprocess_cpu_seconds_total ") && runtime.GOOS == "linux" {
		t.Errorf("no Go or process series:\n%s", page)
	}
	var m *Metrics
	m.Call("p", "t", "ok", time.Second)
	m.CallStarted("p")
	m.CallEnded("p")
	m.PoolEvent("py", "started")
	m.Request(200)
	m.Sessions(func() int { return 1 })
	m.AuthAccepted("alice")
	m.AuthRefused("expired")
}

// Past maxSubjects distinct subjects, the rest count as "other".
func TestAuthSubjectsBounded(t *testing.T) {
	m := New()
	for i := range maxSubjects + 5 {
		m.AuthAccepted("user" + strings.Repeat("x", i))
	}
	m.AuthAccepted("user") // seen before the bound: its own series still
	_, page := scrape(t, m, "/metrics?name[]=nexus_auth_requests_total")
	if n := strings.Count(page, "\nnexus_auth_requests_total{"); n != maxSubjects+1 {
		t.Errorf("%d series, want %d (one per subject up to the bound, and other)", n, maxSubjects+1)
	}
	if !strings.Contains(page, `nexus_auth_requests_total{subject="other"} 5`) {
		t.Errorf("no other 5:\n%.3000s", page)
	}
	if !strings.Contains(page, `nexus_auth_requests_total{subject="user"} 2`) {
		t.Errorf("user is not 2:\n%.3000s", page)
	}
}

// Events recorded from many goroutines while the page is scraped are all
// counted (go test -race checks the sharing).
func TestConcurrentEvents(t *testing.T) {
	m := New()
	const workers, each = 8, 500
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			tool := "t" + strconv.Itoa(w%2)
			for range each {
				m.CallStarted("p")
				m.Call("p", tool, "ok", time.Millisecond)
				m.CallEnded("p")
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			scrape(t, m, "/metrics?name[]=nexus_calls_total")
		}
	})
	wg.Wait()
	_, page := scrape(t, m, "/metrics")
	for _, want := range []string{
		`nexus_calls_total{outcome="ok",program="p",tool="t0"} 2000`,
		`nexus_calls_total{outcome="ok",program="p",tool="t1"} 2000`,
		`nexus_call_duration_seconds_count{program="p",tool="t0"} 2000`,
		`nexus_call_duration_seconds_bucket{program="p",tool="t1",le="0.001"} 2000`,
		`nexus_calls_in_flight{program="p"} 0`,
	} {
		if !strings.Contains(page, want+"\n") {
			t.Errorf("no %s:\n%.4000s", want, page)
		}
	}
}
