// Package metrics owns what `nexus serve` reports at GET /metrics, in
// Prometheus's text format (docs/deploy.md, "Metrics"): calls by program,
// tool and outcome, their latency, calls in flight, pool starts, restarts
// and crashes by language, live MCP sessions, HTTP requests by status, and
// with OAuth the requests accepted by subject and refused by reason
// (auth.go). It knows the names and labels; httpserve and cmd/nexus feed it
// through the small functions here, and it imports nothing of nexus's.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is one server's registry. A nil *Metrics records nothing, so
// that a server without /metrics pays one nil check per event.
type Metrics struct {
	reg      *prometheus.Registry
	calls    *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	inFlight *prometheus.GaugeVec
	pools    *prometheus.CounterVec
	requests *prometheus.CounterVec
	sessions prometheus.Collector // nexus_sessions, once Sessions is called
	auth     *authMetrics         // auth.go
}

// counter is a counter by labels.
func counter(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

// New makes a registry with nexus's metrics and Go's own (memory, GC,
// goroutines) and the process's (CPU, RSS, open files).
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		calls: counter("nexus_calls_total",
			"Tool calls by program, tool and outcome (ok, isError, protocol_error, timeout, cancelled), over MCP and the /call API.",
			"program", "tool", "outcome"),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "nexus_call_duration_seconds",
			Help:    "How long tool calls took, from request to result, by program and tool.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
		}, []string{"program", "tool"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "nexus_calls_in_flight",
			Help: "Tool calls running now (or waiting for one of --max-calls slots), by program.",
		}, []string{"program"}),
		pools:    counter("nexus_pool_events_total", "Pool process starts, restarts and crashes, by language.", "lang", "event"),
		requests: counter("nexus_http_requests_total", "HTTP requests answered, by status code.", "code"),
	}
	m.auth = newAuthMetrics()
	m.reg.MustRegister(m.calls, m.latency, m.inFlight, m.pools, m.requests, m.auth.accepted, m.auth.refused,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Sessions reports the live MCP sessions as nexus_sessions, asking count
// at each scrape.
func (m *Metrics) Sessions(count func() int) {
	if m == nil {
		return
	}
	if m.sessions != nil {
		m.reg.Unregister(m.sessions) // a later server's sessions replace an earlier one's
	}
	m.sessions = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "nexus_sessions",
		Help: "Live MCP sessions (handshake era).",
	}, func() float64 { return float64(count()) })
	m.reg.MustRegister(m.sessions)
}

// CallStarted counts a call of program as in flight until CallEnded.
func (m *Metrics) CallStarted(program string) {
	if m == nil {
		return
	}
	m.inFlight.WithLabelValues(program).Inc()
}

// CallEnded ends what CallStarted counted; Call records how it ended.
func (m *Metrics) CallEnded(program string) {
	if m == nil {
		return
	}
	m.inFlight.WithLabelValues(program).Dec()
}

// Call records a finished call: its outcome and, when it reached a tool,
// its latency.
func (m *Metrics) Call(program, tool, outcome string, took time.Duration) {
	if m == nil {
		return
	}
	m.calls.WithLabelValues(program, tool, outcome).Inc()
	if tool != "" {
		m.latency.WithLabelValues(program, tool).Observe(took.Seconds())
	}
}

// PoolEvent records a pool process's start, restart or crash.
func (m *Metrics) PoolEvent(lang, event string) {
	if m == nil {
		return
	}
	m.pools.WithLabelValues(lang, event).Inc()
}

// Request records an answered HTTP request's status.
func (m *Metrics) Request(code int) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(strconv.Itoa(code)).Inc()
}

// Handler serves the registry in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
