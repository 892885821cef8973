package pool

import (
	"context"
	"encoding/json"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// selfCPU is the CPU time this process (the driver: nexus's side of a
// call) has used, all threads, at microsecond resolution.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Skip("no getrusage: ", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSetSmallCall measures one small call through the Set, as nexus
// makes it (a name, the default five-minute timeout), to the C++ test
// pool: the driver's side of a call, its allocations and its own CPU.
//
//	go test ./internal/pool/ -run '^$' -bench SetSmallCall -benchmem -benchtime 20000x
func BenchmarkSetSmallCall(b *testing.B) {
	exe := buildCppTestPool(b)
	s := Start(context.Background(), []Spec{{Index: 0, Lang: "cpp", Exec: []string{exe}, Dir: filepath.Dir(exe)}},
		quiet(Options{CallTimeout: 5 * time.Minute}))
	defer s.Close()
	if err := s.Ready(context.Background()); err != nil {
		b.Fatal(err)
	}
	args := []json.RawMessage{json.RawMessage("20"), json.RawMessage("22")}
	ctx, cancel := context.WithCancel(context.Background()) // as a tools/call's is
	defer cancel()
	call := func() {
		v, err := s.CallWith(ctx, 0, cppAddInts, args, CallOptions{Name: "add"})
		if err != nil || string(v.JSON) != "42" {
			b.Fatalf("add: %s, %v", v.JSON, err)
		}
	}
	call() // warm up
	b.ReportAllocs()
	b.ResetTimer()
	before := selfCPU(b)
	for i := 0; i < b.N; i++ {
		call()
	}
	used := selfCPU(b) - before
	b.StopTimer()
	b.ReportMetric(float64(used.Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
}

// TestCallTimersReuse checks that a call timer taken from the pool never
// brings a tick from its last use: one that fired is not reused, and one
// that was stopped in time has nothing in its channel.
func TestCallTimersReuse(t *testing.T) {
	tests := []struct {
		name  string
		fired bool
	}{
		{"stopped before firing", false},
		{"fired", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := startTimer(time.Hour)
			if tt.fired {
				first.Reset(time.Nanosecond)
				<-first.C
			}
			stopTimer(first)
			next := startTimer(time.Hour)
			defer stopTimer(next)
			if tt.fired && next == first {
				t.Fatal("a timer that fired was reused")
			}
			select {
			case <-next.C:
				t.Fatal("a reused timer ticked at once: a stale tick from its last call")
			default:
			}
		})
	}
}
