package metrics

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
	"time"
)

// Go's own series, named, described and valued as Prometheus's Go client
// shows them by default: goroutines, threads, GC pauses, the MemStats-like
// memory figures (read from runtime/metrics, as that client does) and
// three of the runtime's settings in the runtime's own words.

// memStat is one go_memstats_* series: its name after the prefix, help,
// kind, and the runtime/metrics samples whose sum is its value.
type memStat struct {
	name, help, kind string
	sum              []string
}

var memStats = []memStat{
	{"alloc_bytes", "Number of bytes allocated in heap and currently in use. Equals to /memory/classes/heap/objects:bytes.", "gauge",
		[]string{"/memory/classes/heap/objects:bytes"}},
	{"alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already. Equals to /gc/heap/allocs:bytes.", "counter",
		[]string{"/gc/heap/allocs:bytes"}},
	{"sys_bytes", "Number of bytes obtained from system. Equals to /memory/classes/total:byte.", "gauge",
		[]string{"/memory/classes/total:bytes"}},
	{"mallocs_total", "Total number of heap objects allocated, both live and gc-ed. Semantically a counter version for go_memstats_heap_objects gauge. Equals to /gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects.", "counter",
		[]string{"/gc/heap/allocs:objects", "/gc/heap/tiny/allocs:objects"}},
	{"frees_total", "Total number of heap objects frees. Equals to /gc/heap/frees:objects + /gc/heap/tiny/allocs:objects.", "counter",
		[]string{"/gc/heap/frees:objects", "/gc/heap/tiny/allocs:objects"}},
	{"heap_alloc_bytes", "Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes. Equals to /memory/classes/heap/objects:bytes.", "gauge",
		[]string{"/memory/classes/heap/objects:bytes"}},
	{"heap_sys_bytes", "Number of heap bytes obtained from system. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes + /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", "gauge",
		[]string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/unused:bytes", "/memory/classes/heap/released:bytes", "/memory/classes/heap/free:bytes"}},
	{"heap_idle_bytes", "Number of heap bytes waiting to be used. Equals to /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", "gauge",
		[]string{"/memory/classes/heap/released:bytes", "/memory/classes/heap/free:bytes"}},
	{"heap_inuse_bytes", "Number of heap bytes that are in use. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes", "gauge",
		[]string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/unused:bytes"}},
	{"heap_released_bytes", "Number of heap bytes released to OS. Equals to /memory/classes/heap/released:bytes.", "gauge",
		[]string{"/memory/classes/heap/released:bytes"}},
	{"heap_objects", "Number of currently allocated objects. Equals to /gc/heap/objects:objects.", "gauge",
		[]string{"/gc/heap/objects:objects"}},
	{"stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments. Equals to /memory/classes/heap/stacks:bytes.", "gauge",
		[]string{"/memory/classes/heap/stacks:bytes"}},
	{"stack_sys_bytes", "Number of bytes obtained from system for stack allocator. Equals to /memory/classes/heap/stacks:bytes + /memory/classes/os-stacks:bytes.", "gauge",
		[]string{"/memory/classes/heap/stacks:bytes", "/memory/classes/os-stacks:bytes"}},
	{"mspan_inuse_bytes", "Number of bytes in use by mspan structures. Equals to /memory/classes/metadata/mspan/inuse:bytes.", "gauge",
		[]string{"/memory/classes/metadata/mspan/inuse:bytes"}},
	{"mspan_sys_bytes", "Number of bytes used for mspan structures obtained from system. Equals to /memory/classes/metadata/mspan/inuse:bytes + /memory/classes/metadata/mspan/free:bytes.", "gauge",
		[]string{"/memory/classes/metadata/mspan/inuse:bytes", "/memory/classes/metadata/mspan/free:bytes"}},
	{"mcache_inuse_bytes", "Number of bytes in use by mcache structures. Equals to /memory/classes/metadata/mcache/inuse:bytes.", "gauge",
		[]string{"/memory/classes/metadata/mcache/inuse:bytes"}},
	{"mcache_sys_bytes", "Number of bytes used for mcache structures obtained from system. Equals to /memory/classes/metadata/mcache/inuse:bytes + /memory/classes/metadata/mcache/free:bytes.", "gauge",
		[]string{"/memory/classes/metadata/mcache/inuse:bytes", "/memory/classes/metadata/mcache/free:bytes"}},
	{"buck_hash_sys_bytes", "Number of bytes used by the profiling bucket hash table. Equals to /memory/classes/profiling/buckets:bytes.", "gauge",
		[]string{"/memory/classes/profiling/buckets:bytes"}},
	{"gc_sys_bytes", "Number of bytes used for garbage collection system metadata. Equals to /memory/classes/metadata/other:bytes.", "gauge",
		[]string{"/memory/classes/metadata/other:bytes"}},
	{"other_sys_bytes", "Number of bytes used for other system allocations. Equals to /memory/classes/other:bytes.", "gauge",
		[]string{"/memory/classes/other:bytes"}},
	{"next_gc_bytes", "Number of heap bytes when next garbage collection will take place. Equals to /gc/heap/goal:bytes.", "gauge",
		[]string{"/gc/heap/goal:bytes"}},
}

// memSampleNames are the runtime/metrics the memstats series read, each
// once.
var memSampleNames = sync.OnceValue(func() []string {
	var names []string
	for _, ms := range memStats {
		for _, n := range ms.sum {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	return names
})

// runtimeSetting is a gauge named after a runtime/metrics metric, described
// in the runtime's words.
type runtimeSetting struct{ name, metric string }

var runtimeSettings = []runtimeSetting{
	{"go_gc_gogc_percent", "/gc/gogc:percent"},
	{"go_gc_gomemlimit_bytes", "/gc/gomemlimit:bytes"},
	{"go_sched_gomaxprocs_threads", "/sched/gomaxprocs:threads"},
}

// runtimeDescriptions are the runtime's descriptions of its metrics, by
// name, looked up once.
var runtimeDescriptions = sync.OnceValue(func() map[string]string {
	d := map[string]string{}
	for _, m := range metrics.All() {
		d[m.Name] = m.Description
	}
	return d
})

// goFamilies reads Go's series now.
func goFamilies() []family {
	gauge := func(name, help string, v float64) family {
		return family{name: name, help: help, kind: "gauge", samples: []sample{{value: v}}}
	}
	threads, _ := runtime.ThreadCreateProfile(nil)
	fams := []family{
		gauge("go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine())),
		gauge("go_threads", "Number of OS threads created.", float64(threads)),
	}

	var gc debug.GCStats
	gc.PauseQuantiles = make([]time.Duration, 5)
	debug.ReadGCStats(&gc)
	pauses := sample{count: uint64(gc.NumGC), sum: gc.PauseTotal.Seconds()}
	for i, p := range gc.PauseQuantiles {
		pauses.quantiles = append(pauses.quantiles, quantile{float64(i) / 4, p.Seconds()})
	}
	fams = append(fams,
		family{name: "go_gc_duration_seconds", help: "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.",
			kind: "summary", samples: []sample{pauses}},
		gauge("go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", float64(gc.LastGC.UnixNano())/1e9),
		family{name: "go_info", help: "Information about the Go environment.", kind: "gauge",
			samples: []sample{{labels: []labelPair{{"version", runtime.Version()}}, value: 1}}},
	)

	names := memSampleNames()
	samples := make([]metrics.Sample, 0, len(names)+len(runtimeSettings))
	for _, name := range names {
		samples = append(samples, metrics.Sample{Name: name})
	}
	for _, s := range runtimeSettings {
		samples = append(samples, metrics.Sample{Name: s.metric})
	}
	metrics.Read(samples)
	rm := map[string]uint64{}
	for _, s := range samples[:len(names)] {
		if s.Value.Kind() == metrics.KindUint64 {
			rm[s.Name] = s.Value.Uint64()
		}
	}
	for _, ms := range memStats {
		var v uint64
		for _, n := range ms.sum {
			v += rm[n]
		}
		fams = append(fams, family{name: "go_memstats_" + ms.name, help: ms.help, kind: ms.kind,
			samples: []sample{{value: float64(v)}}})
	}
	desc := runtimeDescriptions()
	for i, s := range runtimeSettings {
		v := samples[len(names)+i].Value
		var x float64
		switch v.Kind() {
		case metrics.KindUint64:
			x = float64(v.Uint64())
		case metrics.KindFloat64:
			x = v.Float64()
		default:
			continue // this Go has no such metric
		}
		fams = append(fams, gauge(s.name, desc[s.metric]+" Sourced from "+s.metric+".", x))
	}
	return fams
}
