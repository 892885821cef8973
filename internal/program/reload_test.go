package program

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/mcp"
)

// Each generation's pools stop once, when its calls have drained or at
// exit, whichever comes first; pools that come after exit stop at once.
func TestLivePools(t *testing.T) {
	tests := []struct {
		name string
		run  func(lp *livePools, stop func()) // ends with the pools stopped
	}{
		{"retired, then drained", func(lp *livePools, stop func()) {
			drained := make(chan struct{})
			lp.retire(lp.add(stop), drained)
			close(drained)
		}},
		{"stopped at exit while draining", func(lp *livePools, stop func()) {
			lp.retire(lp.add(stop), make(chan struct{}))
			lp.stopAll()
		}},
		{"stopped at exit, drained later", func(lp *livePools, stop func()) {
			drained := make(chan struct{})
			lp.retire(lp.add(stop), drained)
			lp.stopAll()
			close(drained)
		}},
		{"added after exit", func(lp *livePools, stop func()) {
			lp.stopAll()
			lp.add(stop)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stops atomic.Int32
			lp := newLivePools()
			tt.run(lp, func() { stops.Add(1) })
			deadline := time.Now().Add(5 * time.Second)
			for stops.Load() == 0 && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(20 * time.Millisecond) // a second stop would come by now
			if n := stops.Load(); n != 1 {
				t.Errorf("pools stopped %d times, want once", n)
			}
		})
	}
	// The current generation is not stopped by anything but exit.
	var stops atomic.Int32
	lp := newLivePools()
	lp.add(func() { stops.Add(1) })
	time.Sleep(20 * time.Millisecond)
	if stops.Load() != 0 {
		t.Error("the current generation's pools stopped before exit")
	}
	lp.stopAll()
	if stops.Load() != 1 {
		t.Error("stopAll did not stop the current generation's pools")
	}
}

// A reload swaps in the program as its files now are, and stops the old
// generation's pools once its calls have drained; files whose contents
// did not change are not reloaded, unless SIGHUP asks; a program that
// no longer loads leaves the previous one serving.
func TestReloaderSwaps(t *testing.T) {
	dir := t.TempDir()
	writeManifest(t, dir, "prog", pureLiteral("answer", "42"))
	o := &Options{StartTimeout: time.Second}
	first := load(t, dir)
	lp := newLivePools()
	defer lp.stopAll()
	var oldStops atomic.Int32
	current := lp.add(func() { oldStops.Add(1) })
	var swaps [][]running
	drained := make(chan struct{})
	swap := func(next []running) (<-chan struct{}, error) {
		swaps = append(swaps, next)
		return drained, nil
	}
	r, err := newReloader(o, []string{dir}, []*Program{first}, lp, current, swap, false)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	r.log = slog.New(slog.NewTextHandler(&logs, nil))
	ctx := context.Background()

	r.reload(ctx, "unchanged", false)
	if len(swaps) != 0 {
		t.Fatal("reloaded files whose contents did not change")
	}

	writeManifest(t, dir, "prog", pureLiteral("answer", "42"), pureLiteral("more", "7"))
	r.reload(ctx, "changed", false)
	if len(swaps) != 1 || len(swaps[0]) != 1 || len(swaps[0][0].Tools) != 2 {
		t.Fatalf("swaps %+v, want one, of the program with two tools", swaps)
	}
	next := swaps[0][0]
	call := argmap.Call{Command: command(t, next.Manifest, "more")}
	if v, err := next.caller.Call(ctx, call, mcp.CallHooks{}); err != nil || string(v.JSON) != "7" {
		t.Errorf("the new program's command: %s, %v; want 7", v.JSON, err)
	}
	if oldStops.Load() != 0 {
		t.Error("the old pools stopped while calls on them could still run")
	}
	close(drained)
	deadline := time.Now().Add(5 * time.Second)
	for oldStops.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if oldStops.Load() != 1 {
		t.Errorf("the old pools stopped %d times once drained, want once", oldStops.Load())
	}

	os.WriteFile(filepath.Join(dir, "manifest.json"), []byte("{not json"), 0o644)
	r.reload(ctx, "broken", false)
	if len(swaps) != 1 || !strings.Contains(logs.String(), "reload failed: still serving the previous program") {
		t.Errorf("a broken program: %d swaps, log %q; want none, and why", len(swaps), logs.String())
	}

	writeManifest(t, dir, "prog", pureLiteral("answer", "42"))
	r.reload(ctx, "fixed", false)
	r.reload(ctx, "SIGHUP", true)
	if len(swaps) != 3 {
		t.Errorf("%d swaps, want 3: the fixed program, then again when forced", len(swaps))
	}
}
