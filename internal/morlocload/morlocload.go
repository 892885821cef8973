// Package morlocload owns the concurrent calls that the end-to-end tests
// and the bench driver send to the morloc 0.69 bench program
// (testdata/morloc-0.69/bench), and what each must answer: a mixed load of
// Python, C++ and R calls whose results pass 64 KiB, so that every one
// comes back through the pools' shared memory, and sleeps. Every call of a
// load has values of its own, so that a result that went to another
// caller, or was overwritten in shared memory, is seen. It imports nothing
// internal; it does no I/O.
package morlocload

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// Sizes of the lists: each result is more than morloc's 64 KiB inline
// limit (8 bytes a Real, 4 an Int in morloc 0.69's voidstar).
const (
	Reals = 10_000 // 80 000 bytes
	Ints  = 20_002 // 80 008 bytes
)

// Call is one call of a load: a command of the bench program, its
// positional arguments, and the result it must give.
type Call struct {
	Lang string // the pool that answers: py, cpp or r
	Tool string // the command, as a tool and on morloc's CLI and daemon
	Args []json.RawMessage

	// want is the result: element j of a list of n, or the scalar (n 0).
	want func(j int) float64
	n    int
}

// Mixed is n calls that rotate through a Python echo, a C++ scaling, a
// Python range and an R ramp, those of langs only (py, cpp, r; none: all).
// Call i's values depend on i.
func Mixed(n int, langs ...string) []Call {
	kinds := []func(i int) Call{echoPy, scaleCpp, rangePy, rampR}
	var use []func(i int) Call
	for _, k := range kinds {
		if len(langs) == 0 || slices.Contains(langs, k(0).Lang) {
			use = append(use, k)
		}
	}
	if len(use) == 0 {
		return nil
	}
	calls := make([]Call, n)
	for i := range calls {
		calls[i] = use[i%len(use)](i)
	}
	return calls
}

// The values are integers and halves of a few digits: their shortest text
// (nexus) and printf's %.15g (morloc's nexus) are the same, so answers
// compare exactly.

func echoPy(i int) Call {
	at := func(j int) float64 { return float64(i*100_000+j) + 0.5 }
	return Call{Lang: "py", Tool: "echoPy", Args: []json.RawMessage{list(Reals, at)}, want: at, n: Reals}
}

func scaleCpp(i int) Call {
	k := float64(i + 2)
	xs := func(j int) float64 { return float64(j) + 0.5 }
	return Call{Lang: "cpp", Tool: "scaleCpp", Args: []json.RawMessage{number(k), list(Reals, xs)},
		want: func(j int) float64 { return k * xs(j) }, n: Reals}
}

func rangePy(i int) Call {
	start := i * 100_000
	return Call{Lang: "py", Tool: "rangePy", Args: []json.RawMessage{number(Ints), number(float64(start))},
		want: func(j int) float64 { return float64(start + j) }, n: Ints}
}

func rampR(i int) Call {
	start := float64(i*100_000) + 0.5
	return Call{Lang: "r", Tool: "rampR", Args: []json.RawMessage{number(Reals), number(start)},
		want: func(j int) float64 { return start + float64(j) }, n: Reals}
}

// Sleep is a call of sleepPy: the Python pool sleeps that many seconds and
// answers them.
func Sleep(seconds float64) Call {
	return Call{Lang: "py", Tool: "sleepPy", Args: []json.RawMessage{number(seconds)}, want: func(int) float64 { return seconds }}
}

func number(f float64) json.RawMessage { return strconv.AppendFloat(nil, f, 'g', -1, 64) }

func list(n int, at func(j int) float64) json.RawMessage {
	b := make([]byte, 0, 12*n)
	b = append(b, '[')
	for j := range n {
		if j > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, at(j), 'g', -1, 64)
	}
	return append(b, ']')
}

// Arguments are the call's arguments as an MCP tool takes them: a
// version-1 manifest names none, so they are _1, _2, ...
func (c Call) Arguments() json.RawMessage { return c.join('{', '}', true) }

// List is the arguments as a JSON list, as morloc's daemon takes them in
// the body of POST /call/<command>.
func (c Call) List() json.RawMessage { return c.join('[', ']', false) }

func (c Call) join(open, close byte, named bool) json.RawMessage {
	b := []byte{open}
	for i, a := range c.Args {
		if i > 0 {
			b = append(b, ',')
		}
		if named {
			b = append(b, `"_`...)
			b = strconv.AppendInt(b, int64(i+1), 10)
			b = append(b, `":`...)
		}
		b = append(b, a...)
	}
	return append(b, close)
}

// Check says how result, the JSON text of the value the call returned,
// differs from what it must be, or returns nil.
func (c Call) Check(result []byte) error {
	if c.n == 0 {
		var got float64
		if err := json.Unmarshal(result, &got); err != nil {
			return fmt.Errorf("%s: %.100q is not a number", c.Tool, result)
		}
		if want := c.want(0); got != want {
			return fmt.Errorf("%s: %v, want %v", c.Tool, got, want)
		}
		return nil
	}
	var got []float64
	if err := json.Unmarshal(result, &got); err != nil {
		return fmt.Errorf("%s: not a list of numbers (%v): %.100q", c.Tool, err, result)
	}
	if len(got) != c.n {
		return fmt.Errorf("%s: %d elements, want %d (the result begins %.100q)", c.Tool, len(got), c.n, result)
	}
	for j, x := range got {
		if want := c.want(j); x != want {
			return fmt.Errorf("%s: element %d is %v, want %v", c.Tool, j, x, want)
		}
	}
	return nil
}
