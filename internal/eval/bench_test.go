package eval

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkMapLargeArgument is .[:].x on a list of 100,000 records given as
// the argument: decoding, a map of getters, and printing.
func BenchmarkMapLargeArgument(b *testing.B) {
	const n = 100_000
	pt := "m21xj1yj"
	var sb strings.Builder
	sb.WriteByte('[')
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"x":` + strconv.Itoa(i) + `,"y":1}`)
	}
	sb.WriteByte(']')
	arg := json.RawMessage(sb.String())
	none := cont("?j")
	expr := lam(mapE("aj", "e", get("j", keyP(key("x", end)), bound(pt, "e")),
		app("a"+pt, pat("a"+pt, slicePat), none, none, none, bound("a"+pt, "ps"))), "ps")
	p, err := Compile(json.RawMessage(expr), []Param{{Schema: "a" + pt}}, "aj", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(arg)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := p.Run(context.Background(), []json.RawMessage{arg}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseJSON is the JSON reader alone, on what a pure command
// reads: a large argument of records, a long list of reals, strings with
// escapes, and an expression tree.
func BenchmarkParseJSON(b *testing.B) {
	var records, reals, texts strings.Builder
	records.WriteByte('[')
	reals.WriteByte('[')
	texts.WriteByte('[')
	for i := 0; i < 100_000; i++ {
		if i > 0 {
			records.WriteByte(',')
			reals.WriteByte(',')
			texts.WriteByte(',')
		}
		records.WriteString(`{"x":` + strconv.Itoa(i) + `,"y":1}`)
		reals.WriteString(strconv.FormatFloat(float64(i)*1.25e-3, 'g', -1, 64))
		texts.WriteString(`"line ` + strconv.Itoa(i) + `\n\t\"quoted\" caf\u00e9"`)
	}
	records.WriteByte(']')
	reals.WriteByte(']')
	texts.WriteByte(']')
	ten := cont("aj", jl(0), jl(1), jl(2), jl(3))
	tree := lam(mapE("as", "e", show(bound("j", "e")), app("aj", pat("aj", slicePat), jl(-1), cont("?j"), jl(-2), ten)), "x")
	for _, c := range []struct{ name, text string }{
		{"Records", records.String()}, {"Reals", reals.String()}, {"Strings", texts.String()}, {"Tree", tree},
	} {
		data := []byte(c.text)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := parseJSON(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
