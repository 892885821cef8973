package mcp

import (
	"runtime"

	"github.com/nexus-mcp/nexus/internal/memmark"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// largeValue is the size from which a call's buffers are collected as soon
// as they are garbage. A large call allocates several buffers the size of
// its data, one after another (the request line, the arguments' arrays,
// the pool's result, the value's text, the reply); left to the collector's
// pace, the garbage of one step is still there when the next allocates,
// and nexus's peak memory is many times the data. A collection costs a
// millisecond or two where the data takes tens.
const largeValue = 4 << 20

// collectIfLarge runs a collection when n bytes of data have just become
// garbage.
func collectIfLarge(n int) {
	if n >= largeValue {
		runtime.GC()
	}
}

// lineMark is the longest large request line read so far: join gives
// free pages back to the OS only for a line longer than it (memmark; the
// pieces a line is read in are as large as the line, and the argument an
// integer list becomes is larger, 8 bytes an integer: 96 MB of a 100 MB
// integer echo's peak, in one run of three; a warm 10 MB call that gave
// them back every time made 9 400 page faults instead of 4 000).
var lineMark = memmark.Mark{Min: largeValue}

// valueSize is the size of a pool's result: its JSON and its arrays.
func valueSize(v ndarray.Value) int {
	n := len(v.JSON)
	for i := range v.Arrays {
		n += len(v.Arrays[i].Data)
	}
	return n
}
