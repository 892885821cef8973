package mcp

import (
	"runtime"
	"runtime/debug"

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

// returnIfLarge is collectIfLarge that also gives the free pages back to
// the OS at once, for garbage whose pages the call's next large buffer
// cannot reuse: the pieces a request line was read in are as large as the
// line, and the argument an integer list becomes is larger (8 bytes an
// integer), so it went into fresh pages beside them; the runtime's
// background scavenger gives them back too, but often only after that
// (issue 23: 96 MB of a 100 MB integer echo's peak, in one run of three).
func returnIfLarge(n int) {
	if n >= largeValue {
		debug.FreeOSMemory()
	}
}

// valueSize is the size of a pool's result: its JSON and its arrays.
func valueSize(v ndarray.Value) int {
	n := len(v.JSON)
	for i := range v.Arrays {
		n += len(v.Arrays[i].Data)
	}
	return n
}
