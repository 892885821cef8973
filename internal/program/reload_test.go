package program

import (
	"sync/atomic"
	"testing"
	"time"
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
