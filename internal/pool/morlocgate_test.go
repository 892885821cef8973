package pool

import (
	"context"
	"errors"
	"testing"
	"time"
)

// entered reports whether an enter has returned, waiting a moment.
func entered(ch <-chan func()) (func(), bool) {
	select {
	case leave := <-ch:
		return leave, true
	case <-time.After(50 * time.Millisecond):
		return nil, false
	}
}

func enterAsync(g *resultGate, alone bool) <-chan func() {
	ch := make(chan func(), 1)
	go func() {
		leave, err := g.enter(context.Background(), nil, alone)
		if err == nil {
			ch <- leave
		}
	}()
	return ch
}

// Calls whose results come inline run together; one whose result may come
// in shared memory runs alone, after the calls before it, and the calls
// after it wait for it, in order.
func TestResultGate(t *testing.T) {
	var g resultGate
	a, _ := g.enter(context.Background(), nil, false)
	b, _ := g.enter(context.Background(), nil, false)
	alone := enterAsync(&g, true)
	if _, ok := entered(alone); ok {
		t.Fatal("a call whose result may be in shared memory went in beside two others")
	}
	later := enterAsync(&g, false)
	if _, ok := entered(later); ok {
		t.Fatal("a call went in ahead of the one waiting to run alone")
	}
	a()
	a() // leaving twice is leaving once
	if _, ok := entered(alone); ok {
		t.Fatal("the lone call went in while another was in flight")
	}
	b()
	leaveAlone, ok := entered(alone)
	if !ok {
		t.Fatal("the lone call did not go in once the others were done")
	}
	if _, ok := entered(later); ok {
		t.Fatal("a call went in while the lone one was in flight")
	}
	leaveAlone()
	leaveLater, ok := entered(later)
	if !ok {
		t.Fatal("the call behind the lone one did not go in after it")
	}
	leaveLater()
	checkGateEmpty(t, &g)
}

// A call that gives up waiting leaves the line, and the calls behind it
// go in if they may.
func TestResultGateGivingUp(t *testing.T) {
	var g resultGate
	first, _ := g.enter(context.Background(), nil, false)
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() {
		_, err := g.enter(ctx, nil, true)
		gaveUp <- err
	}()
	time.Sleep(20 * time.Millisecond)
	behind := enterAsync(&g, false)
	if _, ok := entered(behind); ok {
		t.Fatal("a call went in ahead of the lone one")
	}
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	leave, ok := entered(behind)
	if !ok {
		t.Fatal("the call behind the one that gave up stayed out")
	}
	expired := make(chan time.Time, 1)
	expired <- time.Now()
	if _, err := g.enter(context.Background(), expired, true); err != errExpired {
		t.Errorf("expired wait: %v, want errExpired", err)
	}
	first()
	leave()
	checkGateEmpty(t, &g)
}

func checkGateEmpty(t *testing.T, g *resultGate) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shared != 0 || g.alone || len(g.waiting) != 0 {
		t.Errorf("gate left with %d shared, alone %v, %d waiting", g.shared, g.alone, len(g.waiting))
	}
}
