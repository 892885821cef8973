package eval

import (
	"fmt"
	"math/big"
	"strings"
	"testing"
)

func TestParseSchema(t *testing.T) {
	fields63 := "m/"
	for i := 0; i < 63; i++ {
		fields63 += fmt.Sprintf("%c%sj", base62Char(len(fmt.Sprint(i))+1), "f"+fmt.Sprint(i))
	}
	for _, c := range []struct {
		schema string
		check  func(*Type) bool
	}{
		{"j", func(t *Type) bool { return t.kind == kInt && t.bits == 0 }},
		{"i4", func(t *Type) bool { return t.kind == kInt && t.bits == 32 && t.signed }},
		{"u8", func(t *Type) bool { return t.kind == kInt && t.bits == 64 && !t.signed }},
		{"f4", func(t *Type) bool { return t.kind == kFloat && t.bits == 32 }},
		{"a:2a:3j", func(t *Type) bool { return t.length == 2 && t.elem.length == 3 && t.elem.elem.kind == kInt }},
		{"a:0j", func(t *Type) bool { return t.length == 0 }},
		{"a:12j", func(t *Type) bool { return t.length == 12 }},
		{"t+" + strings.Repeat("j", 62), func(t *Type) bool { return len(t.items) == 62 }},
		{"t/" + strings.Repeat("b", 63), func(t *Type) bool { return len(t.items) == 63 }},
		{fields63, func(t *Type) bool { return len(t.keys) == 63 && t.keys[62] == "f62" }},
		{"*", func(t *Type) bool { return t.kind == kAny }},
		{"<dict>at2sj", func(t *Type) bool { return t.kind == kList }},
		{"<std::map<$1,$2>>at2sj", func(t *Type) bool { return t.kind == kList }},
		{"&4Listt2j?^4List", func(t *Type) bool {
			r := t.resolve()
			return t.kind == kDecl && r.kind == kTuple && r.items[1].elem.resolve() == r
		}},
		{"&1am21xj1ka^1a", func(t *Type) bool { return t.resolve().items[1].elem.resolve() == t.resolve() }},
		{"T:21as1bj", func(t *Type) bool { return t.kind == kTable && len(t.keys) == 2 }},
		{"F", func(t *Type) bool { return t.kind == kIFile }},
		{"a:2t2i4f4", func(t *Type) bool {
			w, a, ok := t.elem.fixedWidth()
			return t.length == 2 && ok && w == 8 && a == 4
		}},
		{"&1Am11b&1Bt2a^1Aa^1B", func(t *Type) bool {
			b := t.resolve().items[0]
			return b.kind == kDecl && b.resolve().items[0].elem.target == t && b.resolve().items[1].elem.target == b
		}},
	} {
		ty, err := parseSchema(c.schema)
		if err != nil {
			t.Errorf("%s: %v", c.schema, err)
			continue
		}
		if !c.check(ty) {
			t.Errorf("%s: parsed wrong: %+v", c.schema, ty)
		}
	}
	for _, c := range []struct{ schema, want string }{
		{"", "expected a type code, got end of string"},
		{"q", "unknown type code 'q'"},
		{"i3", "expected a width 1, 2, 4 or 8 after 'i'"},
		{"f2", "expected a width 4 or 8 after 'f'"},
		{"a:j", "expected the decimal length"},
		{"jj", `unexpected trailing "j" after a complete type`},
		{"t2j", "expected a type code, got end of string"},
		{"m21aj1aj", `duplicate record field key "a"`},
		{"m19j", "runs past the end"},
		{"<dict", "unterminated type hint"},
		{"^1a", "has no enclosing &a"},
		{"&1a^1a", "no list, tuple, record or table between them"},
		{"&1a?^1a", "no list, tuple, record or table between them"},
		{"&1a&1b?^1a", "no list, tuple, record or table between them"},
		{strings.Repeat("a", 600) + "j", "nested deeper than 256 levels"},
		{"a:99999999999j", "fixed list length 99999999999 is larger than 2147483648"},
		{"i+", "expected a width 1, 2, 4 or 8"},
	} {
		_, err := parseSchema(c.schema)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.schema, err, c.want)
		}
	}
}

func base62Char(n int) byte {
	return "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+/"[n]
}

func TestPrinterForms(t *testing.T) {
	s := &Type{kind: kStr}
	for _, c := range []struct {
		v    string
		f    form
		want string
	}{
		{"a/b", clientForm, `"a/b"`},
		{"a/b", morlocForm, `"a\/b"`},
		{"bad\xffutf8", clientForm, `"bad\ufffdutf8"`},
		{"\x7f\u2028", clientForm, "\"\x7f\u2028\""},
		{"\x1f", morlocForm, `"\u001f"`},
	} {
		out, err := toJSON(strValue(c.v), s, c.f)
		if err != nil || string(out) != c.want {
			t.Errorf("%q in form %d: %s, %v; want %s", c.v, c.f, out, err, c.want)
		}
	}
	// A record's keys: escaped in the client form, raw in morloc's.
	rec, _ := parseSchema(`m11/j`)
	out, _ := toJSON(seqValue([]Value{intValue(bigInt(1))}), rec, morlocForm)
	if string(out) != `{"/":1}` {
		t.Errorf("morloc form record: %s", out)
	}
	// Reals: f4 in its float32 shortest form, f8 in its float64 form.
	for _, c := range []struct {
		schema string
		f      float64
		want   string
	}{
		{"f8", 100, "100"},
		{"f8", 1e20, "100000000000000000000"},
		{"f8", 1e21, "1e+21"},
		{"f8", 1.5e-7, "1.5e-7"},
		{"f8", 1e-6, "0.000001"},
		{"f4", float64(float32(0.1)), "0.1"},
		{"f4", float64(float32(1e-7)), "1e-7"},
		{"f4", float64(float32(3.4e38)), "3.4e+38"},
	} {
		ty, _ := parseSchema(c.schema)
		out, err := toJSON(floatValue(c.f), ty, clientForm)
		if err != nil || string(out) != c.want {
			t.Errorf("%s %v: %s, %v; want %s", c.schema, c.f, out, err, c.want)
		}
	}
}

func bigInt(n int64) *big.Int { return big.NewInt(n) }
