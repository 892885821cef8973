package pool

import (
	"slices"
	"testing"
	"time"
)

// A start's short pauses keep their length: the runtime's timers would
// make each a millisecond at least, and a ready pool waited that long to
// be seen.
func TestShortPausesStayShort(t *testing.T) {
	const d = 200 * time.Microsecond
	took := make([]time.Duration, 21)
	for i := range took {
		start := time.Now()
		sleepThread(d)
		took[i] = time.Since(start)
	}
	slices.Sort(took)
	if med := took[len(took)/2]; med < d || med >= 900*time.Microsecond {
		t.Errorf("a %s pause took %s at the median, want under 900µs (all: %v)", d, med, took)
	}
}
