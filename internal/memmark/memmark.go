// Package memmark owns the high-water marks by which nexus decides when a
// large buffer is worth giving free pages back to the OS for: only before
// a buffer larger than any before it (docs/performance.md, "Fresh
// memory"). On a process's first call of a size, the buffers of its
// earlier steps are free but still resident and too small to reuse, so the
// new buffer would go into fresh pages beside them; a buffer no larger
// than one before finds free pages of its size, and refaulting them would
// cost CPU for nothing.
package memmark

import "sync/atomic"

// Mark is the largest size Raise has seen from Min up.
type Mark struct {
	Min     int          // sizes below it never raise the mark
	Largest atomic.Int64 // the largest size seen so far
}

// Raise reports whether n is at least Min and larger than any size before
// it, and then records it. It is safe for concurrent use.
func (m *Mark) Raise(n int) bool {
	if n < m.Min {
		return false
	}
	for {
		old := m.Largest.Load()
		if int64(n) <= old {
			return false
		}
		if m.Largest.CompareAndSwap(old, int64(n)) {
			return true
		}
	}
}
