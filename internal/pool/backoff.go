package pool

import (
	"fmt"
	"time"
)

// backoff is how a pool that keeps failing is held back
// (Options.RestartDelay): a nexus pool's worker keeps one, and a morloc
// program one per pool, across its instances. Its holder guards it.
type backoff struct {
	failures int       // failed starts and deaths before health, in a row
	retryAt  time.Time // after failures: no start before this
	lastErr  error     // why the last start or process failed
}

// failed records a failed start or a death, and returns how long the pool
// now waits before starting again. A failure after a healthy run starts
// the count afresh.
func (b *backoff) failed(err error, healthy bool, o *Options) time.Duration {
	if healthy {
		b.failures = 0
	}
	b.failures++
	b.lastErr = err
	var delay time.Duration
	if b.failures > 1 {
		delay = o.MaxRestartDelay
		if shift := b.failures - 2; shift < 32 {
			delay = min(o.RestartDelay<<shift, o.MaxRestartDelay)
		}
	}
	b.retryAt = time.Now().Add(delay)
	return delay
}

// holdsBack returns an error saying why pool label may not start yet, or
// nil.
func (b *backoff) holdsBack(label string) error {
	wait := time.Until(b.retryAt)
	if b.lastErr == nil || wait <= 0 {
		return nil
	}
	return fmt.Errorf("pool %s is down after %d failures in a row; next start in %s. Last failure: %w",
		label, b.failures, wait.Round(time.Millisecond), b.lastErr)
}
