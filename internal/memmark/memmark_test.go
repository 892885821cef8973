package memmark

import "testing"

// The mark rises only for a size from Min up that is larger than any
// before it.
func TestRaise(t *testing.T) {
	m := Mark{Min: 4 << 20}
	for _, tt := range []struct {
		n    int
		want bool
	}{{4<<20 - 1, false}, {4 << 20, true}, {4 << 20, false}, {10 << 20, true}, {5 << 20, false}, {10 << 20, false}, {10<<20 + 1, true}} {
		if got := m.Raise(tt.n); got != tt.want {
			t.Errorf("Raise(%d) after %d: %v, want %v", tt.n, m.Largest.Load(), got, tt.want)
		}
	}
}

// Of many goroutines raising the mark to the same new size, exactly one
// is told it is new.
func TestRaiseOnce(t *testing.T) {
	m := Mark{Min: 1}
	const n = 16
	got := make(chan bool, n)
	for range n {
		go func() { got <- m.Raise(100) }()
	}
	raised := 0
	for range n {
		if <-got {
			raised++
		}
	}
	if raised != 1 {
		t.Errorf("%d goroutines were told the mark rose, want 1", raised)
	}
}
