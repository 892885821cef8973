package pool

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// What a call is, whichever driver carries it: its options, its request on
// the way to a process, its reply and its errors.

// CallOptions tunes one call. Name and Timeout default to the Spec's
// Function for the mid, then to the mid and Options.CallTimeout.
type CallOptions struct {
	Hooks
	// Name names the call in messages: the command's name, as in
	// "call to 'fighterDamage' timed out after 30s".
	Name string
	// Timeout bounds the call, from Call to its reply, start of the pool
	// included; a negative value means none.
	Timeout time.Duration
	// Arrays are the arrays among the arguments (Path[0] indexes them),
	// whose places in the JSON hold null. A pool that does not take an
	// array's dtype gets it as JSON.
	Arrays []ndarray.Array
	// GiveArrays hands Arrays over: the caller reads neither the slice nor
	// its arrays again. Once the call is sent and could not be sent again
	// (GiveArrays), the pool sets their Data to nil, in these elements and
	// so in every slice sharing them, so that a large argument is not in
	// memory beside its result.
	// Without it the caller's arrays are only read.
	GiveArrays bool
	// Ret, when set, lets a pool that takes arrays send its result as one.
	Ret *ndarray.Ret
	// Inline, when set, lets the call wait for its reply on the caller's
	// goroutine, watching Inline.Fd too (nexusinline.go, morlocconn.go).
	Inline *Inline
}

// TimeoutError reports a call that did not finish within its timeout. The
// pool was told to cancel it (see docs/internals.md, "Cancellation, timeouts
// and stuck calls").
type TimeoutError struct {
	Call     string        // "call to 'fighterDamage'"
	After    time.Duration // the timeout
	Starting string        // the pool's label when it was still starting, else ""
}

func (e *TimeoutError) Error() string {
	msg := fmt.Sprintf("%s timed out after %s", e.Call, shortDuration(e.After))
	if e.Starting != "" {
		msg += " while pool " + e.Starting + " was starting"
	}
	return msg
}

// Timeout reports true: this error is a timeout (the net.Error
// convention, which mcp reads without knowing this type).
func (e *TimeoutError) Timeout() bool { return true }

// shortDuration writes d as time.Duration does, without zero units: 5m, not 5m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// callRequest is one call on its way to a process.
type callRequest struct {
	mid      int
	args     []json.RawMessage
	opts     CallOptions
	lang     string           // the pool's language, for a call without a name
	timeout  time.Duration    // > 0 when the call has one
	expired  <-chan time.Time // fires when the timeout passes; nil without one
	deadline time.Time        // when expired fires; zero without a timeout
	// packet is a morloc call's, encoded once before it goes to an
	// instance; nil once a large one is sent.
	packet *morlocPacket
}

// dropGiven lets go of the arrays given over with the call
// (CallOptions.GiveArrays).
func (c *callRequest) dropGiven() {
	if c.opts.GiveArrays {
		for i := range c.opts.Arrays {
			c.opts.Arrays[i].Data = nil
		}
	}
}

// resendable reports whether a morloc call's packet can go out again: a
// large one, and the arrays given over with it, go as it is sent.
func (c *callRequest) resendable() bool { return c.packet != nil }

// yieldInline hands the caller's input over (Inline.Yield) if the call was
// to watch it: the call waits for something else than its reply.
func (c *callRequest) yieldInline() {
	if in := c.opts.Inline; in != nil {
		in.Yield()
		c.opts.Inline = nil
	}
}

// name is "call to 'x'" or "call to mid 9 of pool py", for messages: made
// only when one is written, not for every call.
func (c *callRequest) name() string {
	if c.opts.Name != "" {
		return "call to '" + c.opts.Name + "'"
	}
	return fmt.Sprintf("call to mid %d of pool %s", c.mid, c.lang)
}

func (c *callRequest) timedOut(starting string) error {
	return &TimeoutError{Call: c.name(), After: c.timeout, Starting: starting}
}

type callReply struct {
	value   ndarray.Value
	content json.RawMessage // the result's content blocks, if any
	err     error
}

// unstartedError reports a call that the process never began: it was gone
// before the call reached it, or it was replaced while the call waited
// behind a stuck one. The call can safely be tried on a fresh process.
type unstartedError struct{ err error }

func (e *unstartedError) Error() string { return e.err.Error() }
func (e *unstartedError) Unwrap() error { return e.err }

// abandonedCall is a call nexus gave up on (cancelled, or timed out) whose
// reply the process still owes: if none comes within the cancel grace, the
// call is stuck and the process is replaced.
type abandonedCall struct {
	name string // "call to 'x'"
	how  string // "cancelled", "timed out"
}

// largeFrame is the size of a call's frames from which their buffers are
// collected as soon as they are sent (see mcp's collectIfLarge).
const largeFrame = 4 << 20
