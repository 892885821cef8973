// Package generation swaps an immutable value while the users of the old
// one finish with it: the primitive of hot reload (docs/spec.md §6.4). A
// server keeps its program (tools, pools, callers) in a Cell; a call
// Acquires the current generation, which stays usable until it Releases it,
// and a reload Swaps in a new one and learns from the old one's Drained
// when the last call on it has ended, so that its pools can be stopped.
// Acquire is one atomic load and one compare-and-swap; nothing is
// allocated.
package generation

import "sync/atomic"

// Gen is one generation of a Cell's value.
type Gen[T any] struct {
	Value T
	// refs counts the users of this generation, plus one while it is the
	// Cell's current one. Once it reaches 0 it never rises again: the
	// generation is retired and Drained is closed.
	refs    atomic.Int64
	drained chan struct{}
}

func newGen[T any](v T) *Gen[T] {
	g := &Gen[T]{Value: v, drained: make(chan struct{})}
	g.refs.Store(1) // the Cell's own reference
	return g
}

// Release ends one use begun by Acquire.
func (g *Gen[T]) Release() {
	if g.refs.Add(-1) == 0 {
		close(g.drained)
	}
}

// Drained is closed once the generation is no longer current and its last
// user has released it.
func (g *Gen[T]) Drained() <-chan struct{} { return g.drained }

// Cell holds the current generation. Its zero value holds none: Swap one
// in before Load or Acquire.
type Cell[T any] struct {
	cur atomic.Pointer[Gen[T]]
}

// NewCell returns a Cell whose first generation holds v.
func NewCell[T any](v T) *Cell[T] {
	c := &Cell[T]{}
	c.cur.Store(newGen(v))
	return c
}

// Load returns the current generation without holding it: for a reader
// that needs only the value itself, not what it keeps alive (the pools).
func (c *Cell[T]) Load() *Gen[T] { return c.cur.Load() }

// Acquire returns the current generation, held until Release: a Swap meanwhile
// leaves it usable, and its Drained waits for this use to end.
func (c *Cell[T]) Acquire() *Gen[T] {
	for {
		g := c.cur.Load()
		n := g.refs.Load()
		// n == 0: retired between the load and here; the Cell already
		// holds its successor (Swap stores before it releases).
		if n > 0 && g.refs.CompareAndSwap(n, n+1) {
			return g
		}
	}
}

// Swap makes v the current generation and returns the one it replaces
// (nil for the first), whose Drained closes once its last user is done.
func (c *Cell[T]) Swap(v T) *Gen[T] {
	old := c.cur.Swap(newGen(v))
	if old != nil {
		old.Release() // the Cell's reference
	}
	return old
}
