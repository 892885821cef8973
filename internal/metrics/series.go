package metrics

import (
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// maxLabels is the most labels a family of nexus's has (nexus_calls_total:
// program, tool, outcome); a series is found by its values as an array,
// which costs a recorded event no allocation.
const maxLabels = 3

type labelValues = [maxLabels]string

// vec is a labelled family's series, by their label values, each made when
// first recorded: a family none of whose series was recorded is left off
// the page.
type vec[S any] struct {
	name, help string
	labels     []string // as the values are given
	mu         sync.RWMutex
	series     map[labelValues]*S
}

func newVec[S any](name, help string, labels ...string) *vec[S] {
	if len(labels) > maxLabels {
		panic("metrics: " + name + " has more labels than maxLabels")
	}
	return &vec[S]{name: name, help: help, labels: labels, series: map[labelValues]*S{}}
}

// with returns the series of the label values, making it with newS if
// need be.
func (v *vec[S]) with(values labelValues, newS func() *S) *S {
	v.mu.RLock()
	s := v.series[values]
	v.mu.RUnlock()
	if s != nil {
		return s
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if s = v.series[values]; s == nil {
		s = newS()
		v.series[values] = s
	}
	return s
}

// family is the family as the page shows it, each series written by fill.
func (v *vec[S]) family(kind string, fill func(*S, *sample)) family {
	f := family{name: v.name, help: v.help, kind: kind}
	v.mu.RLock()
	defer v.mu.RUnlock()
	for values, s := range v.series {
		smp := sample{labels: make([]labelPair, len(v.labels))}
		for i, name := range v.labels {
			smp.labels[i] = labelPair{name, values[i]}
		}
		fill(s, &smp)
		f.samples = append(f.samples, smp)
	}
	return f
}

// counter counts up by ones.
type counter struct{ n atomic.Uint64 }

func newCounter() *counter { return &counter{} }

type counterVec struct{ *vec[counter] }

func newCounterVec(name, help string, labels ...string) counterVec {
	return counterVec{newVec[counter](name, help, labels...)}
}

func (v counterVec) inc(values labelValues) { v.with(values, newCounter).n.Add(1) }

func (v counterVec) family() family {
	return v.vec.family("counter", func(c *counter, s *sample) { s.value = float64(c.n.Load()) })
}

// gauge goes up and down by ones.
type gauge struct{ n atomic.Int64 }

func newGauge() *gauge { return &gauge{} }

type gaugeVec struct{ *vec[gauge] }

func newGaugeVec(name, help string, labels ...string) gaugeVec {
	return gaugeVec{newVec[gauge](name, help, labels...)}
}

func (v gaugeVec) add(values labelValues, d int64) { v.with(values, newGauge).n.Add(d) }

func (v gaugeVec) family() family {
	return v.vec.family("gauge", func(g *gauge, s *sample) { s.value = float64(g.n.Load()) })
}

// histogram counts observations by bucket: a bucket holds what is at most
// its upper bound, the last (+Inf) the rest.
type histogram struct {
	mu     sync.Mutex
	counts []uint64 // by bucket, not cumulative; len(bounds)+1
	sum    float64
}

type histogramVec struct {
	*vec[histogram]
	bounds []float64 // ascending upper bounds, +Inf left implicit
}

func newHistogramVec(name, help string, bounds []float64, labels ...string) histogramVec {
	if !slices.IsSorted(bounds) {
		panic("metrics: " + name + "'s bucket bounds are not ascending")
	}
	return histogramVec{newVec[histogram](name, help, labels...), bounds}
}

func (v histogramVec) observe(values labelValues, x float64) {
	h := v.with(values, func() *histogram { return &histogram{counts: make([]uint64, len(v.bounds)+1)} })
	i := sort.SearchFloat64s(v.bounds, x) // the first bound ≥ x
	h.mu.Lock()
	h.counts[i]++
	h.sum += x
	h.mu.Unlock()
}

func (v histogramVec) family() family {
	return v.vec.family("histogram", func(h *histogram, s *sample) {
		h.mu.Lock()
		defer h.mu.Unlock()
		s.buckets = make([]bucket, len(v.bounds))
		var cum uint64
		for i, b := range v.bounds {
			cum += h.counts[i]
			s.buckets[i] = bucket{b, cum}
		}
		s.count, s.sum = cum+h.counts[len(v.bounds)], h.sum // +Inf holds the rest
	})
}

// sortLabels puts a sample's labels in the page's order: by name.
func sortLabels(ls []labelPair) {
	slices.SortFunc(ls, func(a, b labelPair) int { return strings.Compare(a.name, b.name) })
}
