package main

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// A payload kind of the large-data phase and the tool that echoes it.
type payloadKind struct {
	name string // in the table
	tool string // tool name without the _lang suffix
	arg  string // its argument's property
	gen  func(rng *rand.Rand, target int) []byte
	warm string // a small argument for the warm-up call
}

var payloadKinds = []payloadKind{
	{"ints", "echo", "xs", intList, "[1,2,3]"},
	{"matrix", "echoMatrix", "m", floatMatrix, "[[1.5,2.25],[3.125,4.0625]]"},
}

// intList is a JSON list of random integers 0..999999 (realistic counts:
// 1 M of them make 6.9 MB) of about target bytes.
func intList(rng *rand.Rand, target int) []byte {
	b := make([]byte, 0, target+16)
	b = append(b, '[')
	for len(b) < target-1 || len(b) == 1 {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, rng.Int64N(1_000_000), 10)
	}
	return append(b, ']')
}

// matrixValue is a random float in [1, 1000) that is not a whole number:
// Go, Python, R and nlohmann all print such a double in the same shortest
// form, without an exponent, so the echo comes back byte for byte.
func matrixValue(rng *rand.Rand) float64 {
	for {
		v := 1 + rng.Float64()*999
		if v != math.Trunc(v) {
			return v
		}
	}
}

// floatMatrix is a square JSON matrix of such floats of about target bytes.
func floatMatrix(rng *rand.Rand, target int) []byte {
	// An element costs its digits and a comma (rows' brackets are few).
	sample := make([]byte, 0, 32)
	per := 0.0
	for range 1000 {
		per += float64(len(strconv.AppendFloat(sample[:0], matrixValue(rng), 'g', -1, 64)) + 1)
	}
	per /= 1000
	n := max(1, int(math.Round(math.Sqrt(float64(target)/per))))
	b := make([]byte, 0, int(float64(n*n)*per)+4*n+16)
	b = append(b, '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		for j := range n {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, matrixValue(rng), 'g', -1, 64)
		}
		b = append(b, ']')
	}
	return append(b, ']')
}

// echoed checks a tools/call reply to an echo of payload without decoding
// it: the text block is the compact JSON of the result escaped as a string,
// and for these numbers the escaped text is the payload byte for byte. A
// reply that differs only in how numbers are written (3.0 for 3) still
// passes, by a slower comparison of the numbers. "" means correct.
func echoed(line, payload []byte) string {
	const open = `"text":"`
	i := bytes.Index(line, []byte(open))
	if i < 0 {
		return fmt.Sprintf("no text block in the reply: %.300s", line)
	}
	rest := line[i+len(open):]
	end := len(payload)
	if len(rest) > end && bytes.Equal(rest[:end], payload) && rest[end] == '"' {
		if !bytes.Contains(rest[end:], []byte(`"isError":false`)) {
			return fmt.Sprintf("the reply is not a success: %.300s", rest[end:])
		}
		return ""
	}
	if !bytes.Contains(line, []byte(`"isError":false`)) {
		return fmt.Sprintf("the reply is not a success: %.300s", line)
	}
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return "the text block does not end"
	}
	if why := sameNumbers(rest[:j], payload); why != "" {
		return "the echo differs from the argument: " + why
	}
	return ""
}

// sameNumbers compares two JSON arrays of numbers token by token, numbers
// by value.
func sameNumbers(got, want []byte) string {
	g, w := 0, 0
	for g < len(got) && w < len(want) {
		if isNumByte(got[g]) && isNumByte(want[w]) {
			gs, ws := g, w
			for g < len(got) && isNumByte(got[g]) {
				g++
			}
			for w < len(want) && isNumByte(want[w]) {
				w++
			}
			a, err1 := strconv.ParseFloat(string(got[gs:g]), 64)
			b, err2 := strconv.ParseFloat(string(want[ws:w]), 64)
			if err1 != nil || err2 != nil || a != b {
				return fmt.Sprintf("at byte %d: %s for %s", gs, got[gs:g], want[ws:w])
			}
			continue
		}
		if got[g] != want[w] {
			return fmt.Sprintf("at byte %d: %q for %q", g, got[g], want[w])
		}
		g++
		w++
	}
	if g != len(got) || w != len(want) {
		return fmt.Sprintf("lengths differ: %d bytes for %d", len(got), len(want))
	}
	return ""
}

func isNumByte(c byte) bool {
	return c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' || (c >= '0' && c <= '9')
}
