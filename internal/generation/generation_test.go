package generation

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// When an old generation drains: at the swap when nobody holds it, else
// when its last holder releases it, never while one still does.
func TestSwapDrainsAfterLastRelease(t *testing.T) {
	tests := []struct {
		name    string
		holders int // acquired before the swap
	}{
		{"unused", 0},
		{"one call in flight", 1},
		{"three calls in flight", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCell("v1")
			var held []*Gen[string]
			for range tt.holders {
				held = append(held, c.Acquire())
			}
			old := c.Swap("v2")
			if old.Value != "v1" {
				t.Fatalf("Swap returned %q, want the old v1", old.Value)
			}
			if got := c.Load().Value; got != "v2" {
				t.Fatalf("after Swap, Load = %q, want v2", got)
			}
			if g := c.Acquire(); g.Value != "v2" {
				t.Fatalf("after Swap, Acquire = %q, want v2", g.Value)
			} else {
				g.Release()
			}
			for i, g := range held {
				if isClosed(old.Drained()) {
					t.Fatalf("drained with %d holder(s) left", len(held)-i)
				}
				if g.Value != "v1" {
					t.Fatalf("a holder sees %q, want v1", g.Value)
				}
				g.Release()
			}
			if !isClosed(old.Drained()) {
				t.Fatal("not drained after the last release")
			}
			if isClosed(c.Load().Drained()) {
				t.Fatal("the current generation drained")
			}
		})
	}
}

func TestFirstSwapOnZeroCell(t *testing.T) {
	var c Cell[int]
	if old := c.Swap(1); old != nil {
		t.Fatalf("first Swap returned %v, want nil", old)
	}
	if g := c.Acquire(); g.Value != 1 {
		t.Fatalf("Acquire = %d, want 1", g.Value)
	}
}

// Calls acquire and release while generations are swapped under them: no
// call ever holds a generation that has drained (whose pools would be
// stopped), and every generation swapped out drains.
func TestConcurrentAcquireAndSwap(t *testing.T) {
	c := NewCell(0)
	stop := make(chan struct{})
	var bad atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				g := c.Acquire()
				if isClosed(g.Drained()) {
					bad.Add(1)
				}
				g.Release()
			}
		})
	}
	var olds []*Gen[int]
	for i := 1; i <= 200; i++ {
		olds = append(olds, c.Swap(i))
	}
	close(stop)
	wg.Wait()
	if n := bad.Load(); n > 0 {
		t.Errorf("%d acquisitions returned a drained generation", n)
	}
	for i, g := range olds {
		select {
		case <-g.Drained():
		case <-time.After(5 * time.Second):
			t.Fatalf("generation %d never drained", i)
		}
	}
}

func BenchmarkAcquireRelease(b *testing.B) {
	c := NewCell(struct{}{})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.Acquire().Release()
		}
	})
}
