package ndarray

import (
	"math"
	"strconv"
)

// Spelling is how non-finite reals are written where a Real is declared,
// since JSON has no NaN or infinity (docs/internals.md, "Values"): each
// member is a JSON string literal, quotes included.
type Spelling struct{ NaN, Inf, NegInf string }

var (
	// ClientSpelling is the form MCP and HTTP clients get, and the wire
	// form between nexus and pools: the spellings JavaScript's Number(),
	// Python's float() and Java's Double.parseDouble all read back.
	ClientSpelling = &Spelling{`"NaN"`, `"Infinity"`, `"-Infinity"`}
	// MorlocSpelling is morloc's own (docs/spec.md §7.2), which the CLI prints.
	MorlocSpelling = &Spelling{`"nan"`, `"inf"`, `"-inf"`}
)

// Append writes the non-finite f in this spelling.
func (s *Spelling) Append(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, s.NaN...)
	case f > 0:
		return append(dst, s.Inf...)
	}
	return append(dst, s.NegInf...)
}

// NonFinite reads a string that stands for a non-finite real, as pools
// send them: "NaN", "Infinity", "-Infinity", and any other spelling Go
// reads as one ("nan", "inf", "-Inf", ...). text is the string's content,
// without quotes. A finite number, or anything else, is not one.
func NonFinite(text string) (float64, bool) {
	if len(text) < 3 || len(text) > 9 {
		return 0, false
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || !math.IsNaN(f) && !math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}
