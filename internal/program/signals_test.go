//go:build unix

package program

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"
)

// A signal notifyStop was given cancels its context, the cause naming the
// signal and counting as context.Canceled; stop cancels it without one.
func TestNotifyStop(t *testing.T) {
	// SIGWINCH, whose default is to be ignored: sent before the
	// registration (which notifyStop does not wait for), it is lost, not
	// fatal, and sent again.
	ctx, stop := notifyStop(context.Background(), syscall.SIGWINCH)
	defer stop()
	deadline := time.Now().Add(10 * time.Second)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		syscall.Kill(syscall.Getpid(), syscall.SIGWINCH)
		time.Sleep(5 * time.Millisecond)
	}
	cause := context.Cause(ctx)
	if cause == nil || cause.Error() != "window changed signal received" || !errors.Is(cause, context.Canceled) {
		t.Fatalf("cause %v, want \"window changed signal received\", a context.Canceled", cause)
	}

	ctx, stop = notifyStop(context.Background(), syscall.SIGWINCH)
	stop()
	if !errors.Is(ctx.Err(), context.Canceled) || context.Cause(ctx) != context.Canceled {
		t.Errorf("after stop: %v, cause %v; want canceled without a signal", ctx.Err(), context.Cause(ctx))
	}
}
