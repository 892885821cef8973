package morlocwire

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ValueError is a value that does not fit its schema, or a result that
// cannot be decoded, and where inside the value: "at [2].x: 2147483648
// does not fit i4 (-2147483648 to 2147483647)".
type ValueError struct {
	segs []seg // innermost first: each level appends as the error goes up
	Err  error
}

// seg is one step into a value: a list or tuple index, or a record key
// (idx -1).
type seg struct {
	key string
	idx int
}

func (e *ValueError) Error() string {
	if p := e.Path(); p != "" {
		return "at " + p + ": " + e.Err.Error()
	}
	return e.Err.Error()
}

func (e *ValueError) Unwrap() error { return e.Err }

// Path is where in the value the fault is, as "[2].x" ("" for the value
// itself). A very deep path keeps its first and last steps.
func (e *ValueError) Path() string {
	var b strings.Builder
	n := len(e.segs)
	for k := 0; k < n; k++ {
		if n > 40 && k == 16 {
			fmt.Fprintf(&b, "...(%d more)...", n-24)
			k = n - 8
		}
		s := e.segs[n-1-k]
		if s.idx >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.idx))
			b.WriteByte(']')
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.key)
	}
	return b.String()
}

// under records that err happened inside s; the path is built only for a
// value that fails, as the error goes up.
func under(err error, s seg) error {
	if ve, ok := err.(*ValueError); ok {
		ve.segs = append(ve.segs, s)
		return ve
	}
	return &ValueError{segs: []seg{s}, Err: err}
}

// refuse makes a ValueError for the value itself.
func refuse(msg string) error { return &ValueError{Err: errors.New(msg)} }
