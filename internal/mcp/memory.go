package mcp

import (
	"runtime"
	"runtime/debug"
	"sync/atomic"

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

// largestLine is the longest request line read so far.
var largestLine atomic.Int64

// newLargest reports whether a request line of n bytes is large and
// longer than any before it. Only then are free pages given back to the
// OS as it is read (join): the pieces a line is read in are as large as
// the line, and the argument an integer list becomes is larger (8 bytes an
// integer), so on a process's first call of that size each went into
// fresh pages beside the freed ones, and the runtime's background
// scavenger gave those back only sometimes in time (issue 23: 96 MB of a
// 100 MB integer echo's peak, in one run of three). A call no larger than
// one before finds free pages of the sizes it needs, and refaulting them
// would cost it CPU for nothing (a warm 10 MB call: 9 400 page faults
// instead of 4 000).
func newLargest(n int) bool {
	if n < largeValue {
		return false
	}
	for {
		old := largestLine.Load()
		if int64(n) <= old {
			return false
		}
		if largestLine.CompareAndSwap(old, int64(n)) {
			return true
		}
	}
}

// returnFreeMemory collects what is garbage and gives the free pages back
// to the OS.
func returnFreeMemory() { debug.FreeOSMemory() }

// valueSize is the size of a pool's result: its JSON and its arrays.
func valueSize(v ndarray.Value) int {
	n := len(v.JSON)
	for i := range v.Arrays {
		n += len(v.Arrays[i].Data)
	}
	return n
}
