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
