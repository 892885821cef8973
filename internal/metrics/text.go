package metrics

import (
	"bufio"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Prometheus's text exposition format, version 0.0.4, as Prometheus's own
// Go client writes it: families by name, a family's series by their label
// values (labels by name), every value in Go's shortest 'g' form.

// family is one metric family of the page.
type family struct {
	name, help string
	kind       string // counter, gauge, histogram or summary
	samples    []sample
}

// sample is one series of a family: its labels and what it holds by kind.
type sample struct {
	labels    []labelPair
	value     float64    // counter, gauge
	buckets   []bucket   // histogram, cumulative, without +Inf (count)
	quantiles []quantile // summary
	count     uint64     // histogram, summary
	sum       float64    // histogram, summary
}

type labelPair struct{ name, value string }

type bucket struct {
	upper float64
	count uint64
}

type quantile struct{ q, value float64 }

// sortSamples orders each sample's labels by name, then the samples by
// their label values in that order.
func (f *family) sortSamples() {
	for _, s := range f.samples {
		sortLabels(s.labels)
	}
	slices.SortFunc(f.samples, func(a, b sample) int {
		if len(a.labels) != len(b.labels) {
			return len(a.labels) - len(b.labels)
		}
		for i := range a.labels {
			if c := strings.Compare(a.labels[i].value, b.labels[i].value); c != 0 {
				return c
			}
		}
		return 0
	})
}

// write writes the family: HELP, TYPE, and each sample's lines.
func (f *family) write(w *bufio.Writer) {
	w.WriteString("# HELP ")
	w.WriteString(f.name)
	w.WriteByte(' ')
	helpEscaper.WriteString(w, f.help)
	w.WriteString("\n# TYPE ")
	w.WriteString(f.name)
	w.WriteByte(' ')
	w.WriteString(f.kind)
	w.WriteByte('\n')
	for _, s := range f.samples {
		switch f.kind {
		case "histogram":
			for _, b := range s.buckets {
				writeLine(w, f.name, "_bucket", s.labels, "le", b.upper, float64(b.count))
			}
			writeLine(w, f.name, "_bucket", s.labels, "le", math.Inf(1), float64(s.count))
			writeLine(w, f.name, "_sum", s.labels, "", 0, s.sum)
			writeLine(w, f.name, "_count", s.labels, "", 0, float64(s.count))
		case "summary":
			for _, q := range s.quantiles {
				writeLine(w, f.name, "", s.labels, "quantile", q.q, q.value)
			}
			writeLine(w, f.name, "_sum", s.labels, "", 0, s.sum)
			writeLine(w, f.name, "_count", s.labels, "", 0, float64(s.count))
		default:
			writeLine(w, f.name, "", s.labels, "", 0, s.value)
		}
	}
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	valueEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

// writeLine writes `name+suffix{labels,extra="x"} value`; extra, when not
// "", is a bucket's le or a summary's quantile.
func writeLine(w *bufio.Writer, name, suffix string, labels []labelPair, extra string, x, value float64) {
	w.WriteString(name)
	w.WriteString(suffix)
	if len(labels) > 0 || extra != "" {
		sep := byte('{')
		for _, l := range labels {
			w.WriteByte(sep)
			w.WriteString(l.name)
			w.WriteString(`="`)
			valueEscaper.WriteString(w, l.value)
			w.WriteByte('"')
			sep = ','
		}
		if extra != "" {
			w.WriteByte(sep)
			w.WriteString(extra)
			w.WriteString(`="`)
			writeFloat(w, x)
			w.WriteByte('"')
		}
		w.WriteByte('}')
	}
	w.WriteByte(' ')
	writeFloat(w, value)
	w.WriteByte('\n')
}

func writeFloat(w *bufio.Writer, f float64) {
	switch {
	case f == 0:
		w.WriteByte('0') // -0 too
	case math.IsInf(f, 1):
		w.WriteString("+Inf")
	case math.IsInf(f, -1):
		w.WriteString("-Inf")
	case math.IsNaN(f):
		w.WriteString("NaN")
	default:
		w.Write(strconv.AppendFloat(w.AvailableBuffer(), f, 'g', -1, 64))
	}
}
