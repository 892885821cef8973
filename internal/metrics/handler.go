package metrics

import (
	"bufio"
	"compress/gzip"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// contentType is the text format's, as Prometheus's client names it.
const contentType = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"

// Handler serves the page: every family, or those that name[] asks for,
// gzipped when the scraper takes gzip (Prometheus does). A scraper that
// asks for the protobuf format gets the text one, which every scraper
// reads (docs/deploy.md, "Metrics").
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fams := m.gather()
		if names := r.URL.Query()["name[]"]; len(names) > 0 {
			fams = slices.DeleteFunc(fams, func(f family) bool { return !slices.Contains(names, f.name) })
		}
		h := w.Header()
		h.Add("Vary", "Accept")
		h.Add("Vary", "Accept-Encoding")
		h.Set("Content-Type", contentType)
		var out io.Writer = w
		if contentEncoding(r.Header.Values("Accept-Encoding")) == "gzip" {
			h.Set("Content-Encoding", "gzip")
			gz := gzipWriters.Get().(*gzip.Writer)
			gz.Reset(w)
			defer func() {
				gz.Close()
				gzipWriters.Put(gz)
			}()
			out = gz
		}
		bw := bufio.NewWriterSize(out, 16<<10)
		for i := range fams {
			fams[i].write(bw)
		}
		bw.Flush()
	})
}

var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

// contentEncoding picks identity or gzip for an Accept-Encoding header as
// Prometheus's client does: the offer (identity first) of the highest
// quality an accepted coding or "*" gives it, "" when that quality is 0.
func contentEncoding(header []string) string {
	best, bestQ := "identity", -1.0
	specs := acceptSpecs(header)
	for _, offer := range []string{"identity", "gzip"} {
		for _, s := range specs {
			if s.q > bestQ && (s.value == "*" || s.value == offer) {
				best, bestQ = offer, s.q
			}
		}
	}
	if bestQ == 0 {
		return ""
	}
	return best
}

type acceptSpec struct {
	value string
	q     float64
}

// acceptSpecs reads "coding[;q=x], ..." lists; the rest of a list is
// dropped from a malformed entry on.
func acceptSpecs(header []string) []acceptSpec {
	var specs []acceptSpec
	for _, line := range header {
		for part := range strings.SplitSeq(line, ",") {
			value, param, hasParam := strings.Cut(part, ";")
			s := acceptSpec{value: strings.TrimSpace(value), q: 1}
			if s.value == "" {
				break
			}
			if hasParam {
				q, ok := strings.CutPrefix(strings.TrimSpace(param), "q=")
				x, err := strconv.ParseFloat(q, 64)
				if !ok || err != nil || x < 0 || x > 1 {
					break
				}
				s.q = x
			}
			specs = append(specs, s)
		}
	}
	return specs
}
