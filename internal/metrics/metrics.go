// Package metrics owns what `nexus serve` reports at GET /metrics, in
// Prometheus's text format (docs/deploy.md, "Metrics"): calls by program,
// tool and outcome, their latency, calls in flight, pool starts, restarts
// and crashes by language, live MCP sessions, HTTP requests by status, and
// with OAuth the requests accepted by subject and refused by reason
// (auth.go), beside Go's own series (goruntime.go) and the process's
// (process*.go). It knows the names and labels and writes the format
// itself (text.go, handler.go); httpserve and cmd/nexus feed it through
// the small functions here, and it imports nothing of nexus's.
//
// It does not use Prometheus's Go client: that client, its protobuf model
// and procfs cost every start of nexus about a millisecond of package
// initialisation, which a one-shot `nexus run` pays for nothing; the page
// is the same, byte for byte (testdata/exposition.golden.txt).
package metrics

import (
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Metrics is one server's registry. A nil *Metrics records nothing, so
// that a server without /metrics pays one nil check per event.
type Metrics struct {
	calls    counterVec
	latency  histogramVec
	inFlight gaugeVec
	pools    counterVec
	requests counterVec
	sessions atomic.Pointer[func() int] // nexus_sessions, once Sessions is called
	auth     *authMetrics               // auth.go
}

// New makes a registry with nexus's metrics and Go's own (memory, GC,
// goroutines) and the process's (CPU, RSS, open files).
func New() *Metrics {
	return &Metrics{
		calls: newCounterVec("nexus_calls_total",
			"Tool calls by program, tool and outcome (ok, isError, protocol_error, timeout, cancelled), over MCP and the /call API.",
			"program", "tool", "outcome"),
		latency: newHistogramVec("nexus_call_duration_seconds",
			"How long tool calls took, from request to result, by program and tool.",
			[]float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
			"program", "tool"),
		inFlight: newGaugeVec("nexus_calls_in_flight",
			"Tool calls running now (or waiting for one of --max-calls slots), by program.", "program"),
		pools:    newCounterVec("nexus_pool_events_total", "Pool process starts, restarts and crashes, by language.", "lang", "event"),
		requests: newCounterVec("nexus_http_requests_total", "HTTP requests answered, by status code.", "code"),
		auth:     newAuthMetrics(),
	}
}

// Sessions reports the live MCP sessions as nexus_sessions, asking count
// at each scrape; a later server's count replaces an earlier one's.
func (m *Metrics) Sessions(count func() int) {
	if m == nil {
		return
	}
	m.sessions.Store(&count)
}

// CallStarted counts a call of program as in flight until CallEnded.
func (m *Metrics) CallStarted(program string) {
	if m == nil {
		return
	}
	m.inFlight.add(labelValues{program}, 1)
}

// CallEnded ends what CallStarted counted; Call records how it ended.
func (m *Metrics) CallEnded(program string) {
	if m == nil {
		return
	}
	m.inFlight.add(labelValues{program}, -1)
}

// Call records a finished call: its outcome and, when it reached a tool,
// its latency.
func (m *Metrics) Call(program, tool, outcome string, took time.Duration) {
	if m == nil {
		return
	}
	m.calls.inc(labelValues{program, tool, outcome})
	if tool != "" {
		m.latency.observe(labelValues{program, tool}, took.Seconds())
	}
}

// PoolEvent records a pool process's start, restart or crash.
func (m *Metrics) PoolEvent(lang, event string) {
	if m == nil {
		return
	}
	m.pools.inc(labelValues{lang, event})
}

// Request records an answered HTTP request's status.
func (m *Metrics) Request(code int) {
	if m == nil {
		return
	}
	m.requests.inc(labelValues{strconv.Itoa(code)})
}

// gather is the page's families: those with a series, by name, their
// series in order.
func (m *Metrics) gather() []family {
	fams := []family{m.calls.family(), m.latency.family(), m.inFlight.family(), m.pools.family(), m.requests.family(),
		m.auth.accepted.family(), m.auth.refused.family()}
	if count := m.sessions.Load(); count != nil {
		fams = append(fams, family{name: "nexus_sessions", help: "Live MCP sessions (handshake era).", kind: "gauge",
			samples: []sample{{value: float64((*count)())}}})
	}
	fams = append(fams, goFamilies()...)
	fams = append(fams, processFamilies()...)
	fams = slices.DeleteFunc(fams, func(f family) bool { return len(f.samples) == 0 })
	slices.SortFunc(fams, func(a, b family) int { return strings.Compare(a.name, b.name) })
	for i := range fams {
		fams[i].sortSamples()
	}
	return fams
}
