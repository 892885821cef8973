package program

import (
	"context"
	"os"
	"os/signal"
)

// notifyStop is signal.NotifyContext for a CLI run that must not wait for
// signal handling to be set up or taken down: the first Notify starts the
// runtime's signal thread and each signal's registration (and each Stop)
// waits for that thread to run, a few context switches that a one-shot
// call on busy CPUs paid twice on its critical path. Here one goroutine
// registers the signals, cancels ctx when one comes (its cause names it,
// "interrupt signal received", as NotifyContext's does) and unregisters
// them once ctx is done, and neither notifyStop nor stop waits for it.
// A signal in the instant before registration ends nexus by its default
// action, as one before nexus started would: its pools go with it
// (Pdeathsig, the reaper).
func notifyStop(parent context.Context, sigs ...os.Signal) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	go func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, sigs...)
		defer signal.Stop(ch)
		select {
		case s := <-ch:
			cancel(signalStop(s.String() + " signal received"))
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(nil) }
}

// signalStop is why a signal stopped the run; it is a context.Canceled,
// as NotifyContext's cause is.
type signalStop string

func (s signalStop) Error() string { return string(s) }

func (s signalStop) Is(target error) bool { return target == context.Canceled }
