package httpserve

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/metrics"
)

// BenchmarkStatelessCall prices /metrics on the hot path: one stateless
// MCP tools/call through the whole handler, pool answering at once.
func BenchmarkStatelessCall(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := map[bool]string{false: "metrics-off", true: "metrics-on"}[on]
		b.Run(name, func(b *testing.B) {
			var m *metrics.Metrics
			if on {
				m = metrics.New()
			}
			fc := &fakeCaller{}
			s, err := New(Config{Logger: quietLogger(), Metrics: m}, []Program{loadProgramB(b, "shapes", fc)})
			if err != nil {
				b.Fatal(err)
			}
			h := s.Handler()
			body := statelessBody(1, "tools/call", `"name":"addInt","arguments":{"_1":41}`)
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("MCP-Protocol-Version", "2026-07-28")
				req.Header.Set("Mcp-Method", "tools/call")
				req.Header.Set("Mcp-Name", "addInt")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"text":"42"`) {
					b.Fatalf("%d %s", rec.Code, rec.Body.String())
				}
			}
		})
	}
}
