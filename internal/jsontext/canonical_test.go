package jsontext

import (
	"bytes"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/jsontext/jsontexttest"
)

func canonical(t testing.TB, s string) string {
	t.Helper()
	out, err := AppendCanonical(nil, []byte(s))
	if err != nil {
		t.Fatalf("Canonical(%q): %v", s, err)
	}
	return string(out)
}

func TestCanonicalForms(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{` { "b" : [ 1 , 2 ] , "a" : { "y" : null , "x" : true } } `, `{"a":{"x":true,"y":null},"b":[1e0,2e0]}`},
		{`"\u0041\n\u00e9\ud83d\ude00\/"`, `"A\né😀/"`},
		{`{"\u0061":1,"a":2}`, `{"a":2e0}`}, // the same key twice: the last
		{`{"b":1,"a":2,"b":3}`, `{"a":2e0,"b":3e0}`},
		{`{"é":1,"z":2,"":3}`, `{"":3e0,"z":2e0,"é":1e0}`}, // by UTF-8 bytes
		{`0`, `0`}, {`-0`, `-0`}, {`0.000`, `0`}, {`-0e5`, `-0`}, {`0E-7`, `0`},
		{`100`, `1e2`}, {`1e2`, `1e2`}, {`100.0`, `1e2`}, {`1.00E+2`, `1e2`}, {`10000e-2`, `1e2`},
		{`1.5`, `15e-1`}, {`-0.00150`, `-15e-4`}, {`123456789012345678901234567890`, `12345678901234567890123456789e1`},
		{`9007199254740993`, `9007199254740993e0`}, {`9007199254740992`, `9007199254740992e0`},
		{`1e-0000`, `1e0`}, {`1e+0000000000000000000000000000001`, `1e1`},
		{`25e99999999999999999999`, `25e99999999999999999999`}, {`2.5e-99999999999999999999`, `25e-100000000000000000000`},
		{`[]`, `[]`}, {`{}`, `{}`}, {`[[],{}]`, `[[],{}]`}, {"\"\xff\"", "\"\ufffd\""}, {`"\ud800"`, "\"\ufffd\""},
		{"\"\u2028\"", `"\u2028"`},
	} {
		if got := canonical(t, c.in); got != c.want {
			t.Errorf("Canonical(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

// Different values never share a canonical form, however close: integers
// beyond 2^53, which a double cannot tell apart, included.
func TestCanonicalKeepsValuesApart(t *testing.T) {
	for _, pair := range [][2]string{
		{`9007199254740993`, `9007199254740992`},
		{`18446744073709551616`, `18446744073709551617`},
		{`0.1`, `0.10000000000000000001`},
		{`1e400`, `1e401`},
		{`-0`, `0`},
		{`1`, `"1"`},
		{`{"a":1}`, `{"a":1,"b":1}`},
		{`{"a":1,"a":2}`, `{"a":1}`},
		{`[1,2]`, `[2,1]`},
		{`"a"`, `"a "`},
		{`null`, `{}`},
	} {
		if a, b := canonical(t, pair[0]), canonical(t, pair[1]); a == b {
			t.Errorf("%s and %s both canonicalise to %s", pair[0], pair[1], a)
		}
	}
}

func TestCanonicalRefusesInvalidJSON(t *testing.T) {
	for _, c := range validityCases {
		_, err := AppendCanonical(nil, []byte(c))
		if want := json.Valid([]byte(c)); (err == nil) != want {
			t.Errorf("Canonical(%q) error = %v, json.Valid = %v", c, err, want)
		}
	}
	deep := strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1)
	if _, err := AppendCanonical(nil, []byte(deep)); err == nil || !strings.Contains(err.Error(), "max depth") {
		t.Errorf("depth %d: error = %v, want max depth", MaxDepth+1, err)
	}
}

// A value larger than a piece is emitted in pieces that make it whole.
func TestCanonicalInPieces(t *testing.T) {
	list := intList(5000)
	var pieces int
	var whole []byte
	if err := Canonical(list, func(p []byte) { pieces++; whole = append(whole, p...) }); err != nil {
		t.Fatal(err)
	}
	want, _ := AppendCanonical(nil, list)
	if pieces < 2 || !bytes.Equal(whole, want) {
		t.Errorf("%d pieces, equal %v", pieces, bytes.Equal(whole, want))
	}
}

// FuzzCanonical holds Canonical to encoding/json: it refuses exactly the
// invalid texts; the value encoding/json decodes and writes back (keys
// sorted, space gone, strings re-escaped, a repeated key's last value)
// has the same canonical form; the form is itself JSON of the same value
// (numbers compared exactly) and its own canonical form.
func FuzzCanonical(f *testing.F) {
	for _, c := range validityCases {
		f.Add([]byte(c))
	}
	f.Add([]byte(`{"b":[1.50,-0,1e2],"a":{"\u0063":"\u00e9","c":null}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := AppendCanonical(nil, b)
		if (err == nil) != json.Valid(b) {
			t.Fatalf("Canonical(%q) error = %v, json.Valid = %v", b, err, json.Valid(b))
		}
		if err != nil {
			return
		}
		v := jsontexttest.Decode(t, b)
		again, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if other, _ := AppendCanonical(nil, again); !bytes.Equal(got, other) {
			t.Fatalf("Canonical(%s) = %s, but of encoding/json's %s: %s", b, got, again, other)
		}
		if !jsontexttest.Same(v, jsontexttest.Decode(t, got), exactNumber) {
			t.Fatalf("Canonical(%s) = %s, another value", b, got)
		}
		if twice, _ := AppendCanonical(nil, got); !bytes.Equal(twice, got) {
			t.Fatalf("Canonical(%s) = %s, not canonical", got, twice)
		}
	})
}

// exactNumber compares numbers by exact value and sign.
func exactNumber(x, y json.Number) bool {
	if hugeExponent(string(x)) || hugeExponent(string(y)) {
		return true // big.Rat would spell out 10^exponent; TestCanonicalForms covers these
	}
	a, _ := new(big.Rat).SetString(string(x))
	b, _ := new(big.Rat).SetString(string(y))
	return a.Cmp(b) == 0 && strings.HasPrefix(string(x), "-") == strings.HasPrefix(string(y), "-")
}

func hugeExponent(n string) bool {
	i := strings.IndexAny(n, "eE")
	return i >= 0 && len(strings.TrimLeft(n[i+1:], "+-0")) > 4
}

func BenchmarkCanonicalInts(b *testing.B) {
	list := intList(1_000_000)
	b.SetBytes(int64(len(list)))
	for b.Loop() {
		if err := Canonical(list, func([]byte) {}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCanonicalRecords(b *testing.B) {
	var sb strings.Builder
	sb.WriteByte('[')
	for i := range 100_000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"name":"row","score":0.5,"id":12345,"tags":["a","b"]}`)
	}
	sb.WriteByte(']')
	list := []byte(sb.String())
	b.SetBytes(int64(len(list)))
	for b.Loop() {
		if err := Canonical(list, func([]byte) {}); err != nil {
			b.Fatal(err)
		}
	}
}
