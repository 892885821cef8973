package eval

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// dumpTree writes a jnode compactly, so a test can say what tree it wants:
// numbers as #text, every object member in order.
func dumpTree(n *jnode) string {
	switch n.k {
	case jStr:
		return fmt.Sprintf("%q", n.s)
	case jNum:
		return "#" + n.s
	case jArr, jObj:
		parts := make([]string, len(n.items))
		for i := range n.items {
			parts[i] = dumpTree(&n.items[i])
			if n.k == jObj {
				parts[i] = fmt.Sprintf("%q:", n.keys[i]) + parts[i]
			}
		}
		if n.k == jArr {
			return "[" + strings.Join(parts, " ") + "]"
		}
		return "{" + strings.Join(parts, " ") + "}"
	}
	return n.k.String()
}

func TestParseJSONTrees(t *testing.T) {
	tests := []struct{ in, want string }{
		{`null`, `null`}, {`true`, `true`}, {` false `, `false`}, {"\t{\n}\r ", `{}`}, {`[]`, `[]`},
		// Numbers keep their text: exact integers of any size, -0, reals beyond a double.
		{`0`, `#0`}, {`-0`, `#-0`}, {`-0.0`, `#-0.0`}, {`1.5e+10`, `#1.5e+10`}, {`-12.25E-3`, `#-12.25E-3`},
		{`123456789012345678901234567890`, `#123456789012345678901234567890`}, {`1e400`, `#1e400`},
		// Members in order; a repeated key stays (get takes the last).
		{`{"b":1,"a":2}`, `{"b":#1 "a":#2}`}, {`{"a":1,"a":2}`, `{"a":#1 "a":#2}`},
		{` [ 1 , [ 2 , {} ] ] `, `[#1 [#2 {}]]`},
		{`{"a":1,"b":[true,false,null],"c":{"d":"e"}}`, `{"a":#1 "b":[true false null] "c":{"d":"e"}}`},
		// Strings: escapes, surrogate pairs, lone surrogates as U+FFFD.
		{`""`, `""`}, {`"é"`, `"é"`}, {`"a\"b\\c\/\b\f\n\r\t\u00e9\ud83d\ude00"`, `"a\"b\\c/\b\f\n\r\té😀"`},
		{`"\uD83D\uDE00"`, `"😀"`}, {`"\ud800"`, `"�"`}, {`"\udc00\ud800x"`, `"��x"`}, {`"\ud800\u0041"`, `"�A"`},
		{`"\ud83d\ud83d\ude00"`, `"�😀"`}, {`{"\u0061":"\n"}`, `{"a":"\n"}`},
	}
	for _, tt := range tests {
		n, err := parseJSON([]byte(tt.in))
		if err != nil {
			t.Errorf("parseJSON(%q): %v", tt.in, err)
		} else if got := dumpTree(&n); got != tt.want {
			t.Errorf("parseJSON(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	n, err := parseJSON([]byte(`{"a":1,"b":2,"a":3}`))
	if v, ok := n.get("a"); err != nil || !ok || v.s != "3" {
		t.Errorf(`get("a") of a repeated key = %v, %v, %v; want the last, 3`, v, ok, err)
	}
}

// A user sees these, from @read and @load: what was wrong, and where.
func TestParseJSONErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, `offset 0: unexpected end of JSON input`},
		{` `, `offset 1: unexpected end of JSON input`},
		{`not_a_number`, `offset 0: invalid literal, expected null`},
		{`NaN`, `offset 0: invalid character 'N' looking for beginning of value`},
		{`é`, `offset 0: invalid character 'é' looking for beginning of value`},
		{`01`, `offset 1: unexpected '1' after the JSON value`},
		{`truex`, `offset 4: unexpected 'x' after the JSON value`},
		{`{"a":1}}`, `offset 7: unexpected '}' after the JSON value`},
		{`1.`, `offset 2: invalid number: no digit after the decimal point`},
		{`1e+`, `offset 3: invalid number: no digit in the exponent`},
		{`-`, `offset 1: invalid number`},
		{`"abc`, `offset 0: unterminated string`},
		{`"\x"`, `offset 1: invalid escape character 'x' in string`},
		{`"\u12g4"`, `offset 1: invalid \u escape`},
		{"\"a\x01b\"", `offset 2: invalid control character in string`},
		{`[1,]`, `offset 3: invalid character ']' looking for beginning of value`},
		{`[true false]`, `offset 6: expected ',' or ']' after array element, got 'f'`},
		{`[1,2`, `offset 4: expected ',' or ']' after array element, got end of input`},
		{`{"a"}`, `offset 4: expected ':' after object key, got '}'`},
		{`{a:1}`, `offset 1: expected a string key in object, got 'a'`},
		{`{"a":1 "b":2}`, `offset 7: expected ',' or '}' after object value, got '"'`},
		// Invalid UTF-8 is refused, not replaced: the offset is the bad byte's.
		{"\"\xff\xfe\"", `offset 1: invalid UTF-8 in a string`},
		{"\"a\\n\xff\"", `offset 4: invalid UTF-8 in a string`},
		{"[\"ok\",\"é\xe2\x82\"]", `offset 9: invalid UTF-8 in a string`},
		{"{\"k\xff\":1}", `offset 3: invalid UTF-8 in a string`},
		{strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1), `nested deeper than 10000 levels`},
		{`{"a":` + strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth) + "}", `nested deeper than 10000 levels`},
	}
	for _, tt := range tests {
		_, err := parseJSON([]byte(tt.in))
		if err == nil || !strings.HasPrefix(err.Error(), "invalid JSON at offset") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseJSON(%.40q) error = %v, want %q", tt.in, err, tt.want)
		}
	}
	deep := strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth)
	if _, err := parseJSON([]byte(deep)); err != nil {
		t.Errorf("%d levels: %v", maxJSONDepth, err)
	}
}

// parseJSON accepts what encoding/json accepts, but for invalid UTF-8.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,-0,1e400,"\ud800"]}`, `[1,]`, "\"\xff\"", `{"a":1,"a":{}}`, ` "x" `, `[[[]]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := parseJSON(b)
		if want := json.Valid(b) && utf8.Valid(b); (err == nil) != want {
			t.Fatalf("parseJSON(%q) error = %v, want valid = %v", b, err, want)
		}
		if err == nil && n.k == jStr {
			var s string
			if err := json.Unmarshal(b, &s); err != nil || s != n.s {
				t.Fatalf("parseJSON(%q) = %q, encoding/json reads %q (%v)", b, n.s, s, err)
			}
		}
	})
}
