package jsontext

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var validityCases = []string{
	`null`, `true`, `false`, `0`, `-0`, `1.5e+10`, `-12.25E-3`, `""`, `"a\"b\\c\/\b\f\n\r\t\u00e9\ud83d\ude00"`,
	`[]`, `[1,2,3]`, ` [ 1 , [ 2 , {} ] ] `, `{}`, `{"a":1,"b":[true,false,null],"c":{"d":"e"}}`,
	"\"\xff\xfe\"", `"\ud800"`, `"\udc00\ud800x"`,
	// invalid
	``, ` `, `nul`, `tru`, `01`, `1.`, `.5`, `1e`, `1e+`, `-`, `+1`, `"abc`, `"\x"`, `"\u12"`, `"\u12g4"`,
	"\"a\x01b\"", `[1,]`, `[,1]`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{a:1}`, `[1 2]`, `{"a":1 "b":2}`, `1 2`, `[`, `{`, `]`, `}`,
	`{"a":1}}`, `[[[]]`, `"\`, `tRUE`, `NaN`, `Infinity`,
}

func TestWholeAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range validityCases {
		_, _, err := Whole([]byte(c))
		if want := json.Valid([]byte(c)); (err == nil) != want {
			t.Errorf("Whole(%q) error = %v, json.Valid = %v", c, err, want)
		}
	}
}

func TestMaxDepth(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if _, _, err := Whole([]byte(deep)); err != nil {
		t.Errorf("depth %d: %v", MaxDepth, err)
	}
	deeper := "[" + deep + "]"
	if _, _, err := Whole([]byte(deeper)); err == nil || !strings.Contains(err.Error(), "exceeded max depth: nested deeper than 10000 levels") {
		t.Errorf("depth %d: error = %v, want max depth", MaxDepth+1, err)
	}
}

func TestUnquoteAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range []string{`""`, `"plain"`, `"a\"b\\c\/\b\f\n\r\t"`, `"\u00e9\u0000"`, `"\ud83d\ude00"`,
		`"\ud800"`, `"\ud800\u0041"`, `"\udc00"`, "\"\xff\"", "\"é\xe2\x82\"", `"\ud83d\ud83d\ude00"`} {
		end, _, err := String([]byte(c), 0)
		if err != nil || end != len(c) {
			t.Fatalf("String(%q) = %d, %v", c, end, err)
		}
		var want string
		if err := json.Unmarshal([]byte(c), &want); err != nil {
			t.Fatal(err)
		}
		if got := Unquote([]byte(c)); got != want {
			t.Errorf("Unquote(%q) = %q, want %q", c, got, want)
		}
	}
}

func TestStringNeedsDecoding(t *testing.T) {
	for c, want := range map[string]bool{`"abc"`: false, `"é"`: false, `"a\nb"`: true, "\"\xff\"": true, `"\u0041"`: true} {
		if _, got, err := String([]byte(c), 0); err != nil || got != want {
			t.Errorf("String(%q) needsDecoding = %v, %v; want %v", c, got, err, want)
		}
	}
}

func TestParseInt64(t *testing.T) {
	tests := []struct {
		tok  string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"-0", 0, true}, {"42", 42, true}, {"-42", -42, true},
		{"9223372036854775807", 1<<63 - 1, true}, {"-9223372036854775808", -1 << 63, true},
		{"9223372036854775808", 0, false}, {"-9223372036854775809", 0, false},
		{"99999999999999999999", 0, false}, {"1.0", 0, false}, {"1e3", 0, false}, {"", 0, false}, {"-", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseInt64([]byte(tt.tok))
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseInt64(%q) = %d, %v; want %d, %v", tt.tok, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzWhole(f *testing.F) {
	for _, c := range validityCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, err := Whole(b)
		if want := json.Valid(b); (err == nil) != want {
			t.Fatalf("Whole(%q) error = %v, json.Valid = %v", b, err, want)
		}
		if err == nil && len(b) > 0 {
			start := SkipSpace(b, 0)
			if b[start] == '"' {
				end, _, _ := String(b, start)
				var want string
				if json.Unmarshal(b, &want) == nil && Unquote(b[start:end]) != want {
					t.Fatalf("Unquote(%q) = %q, want %q", b[start:end], Unquote(b[start:end]), want)
				}
			}
		}
	})
}

func TestAppendCompactAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range validityCases {
		b := []byte(c)
		start := SkipSpace(b, 0)
		got, end, err := AppendCompact(nil, b, start)
		var want bytes.Buffer
		werr := json.Compact(&want, b)
		if err != nil || SkipSpace(b, end) != len(b) {
			if werr == nil {
				t.Errorf("AppendCompact(%q) failed (%v) where json.Compact did not", c, err)
			}
			continue
		}
		if werr != nil {
			t.Errorf("AppendCompact(%q) = %q, json.Compact fails: %v", c, got, werr)
		} else if string(got) != want.String() {
			t.Errorf("AppendCompact(%q) = %q, want %q", c, got, want.String())
		}
	}
}

// An error names the character it found, not its first byte.
func TestErrorsQuoteCharacters(t *testing.T) {
	for in, want := range map[string]string{
		"é":      `invalid character 'é' looking for beginning of value at offset 0`,
		"[1,é]":  `invalid character 'é' looking for beginning of value at offset 3`,
		"1 é":    `invalid character 'é' after top-level value at offset 2`,
		"\xff":   `invalid character '\xff' looking for beginning of value at offset 0`,
		"[\x01]": `invalid character '\x01' looking for beginning of value at offset 1`,
	} {
		if _, _, err := Whole([]byte(in)); err == nil || err.Error() != want {
			t.Errorf("Whole(%q) error = %v, want %s", in, err, want)
		}
	}
}

// Depth counts from the top of the document wherever a walk starts.
func TestValueInCountsEnclosingDepth(t *testing.T) {
	inner := []byte(strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1))
	if _, err := ValueIn(inner, 0, 1); err != nil {
		t.Errorf("%d levels inside 1: %v", MaxDepth-1, err)
	}
	if _, err := ValueIn(inner, 0, 2); err == nil {
		t.Errorf("%d levels inside 2 passed", MaxDepth-1)
	}
}

func encodingJSONString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// FuzzAppendString: AppendString writes what encoding/json writes.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c", "\x00\x01\b\f\n\r\t\x1f\x7f", "<&>", "é€😀", "\u2028\u2029", "\xff\xfe", "a\xe2\x82", "[1,2,{\"k\":\"v\"}]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendString(nil, []byte(s)), encodingJSONString(s); !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q) = %s, encoding/json writes %s", s, got, want)
		}
	})
}

// Skip finds the same end as Value for every valid document; for an invalid
// one it may pass where Value fails, but never fails where Value passes.
func FuzzSkip(f *testing.F) {
	for _, c := range validityCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		start, vend, verr := Whole(b)
		send, serr := Skip(b, start, 0)
		if verr == nil && (serr != nil || send != vend) {
			t.Fatalf("%q: Skip = %d, %v; Value = %d", b, send, serr, vend)
		}
	})
}

// A string, number or literal is skipped as Value reads it: its end is
// the value's own, whatever follows; an array is skipped by its brackets.
func TestSkipScalarEndsWithTheValue(t *testing.T) {
	for _, c := range []struct {
		in      string
		end     int
		invalid bool
	}{
		{`00`, 1, false}, {`1x`, 1, false}, {`"a"b`, 3, false}, {`true,`, 4, false},
		{`-`, 0, true}, {`nul`, 0, true}, {`x`, 0, true}, {``, 0, true},
		{`[00]`, 4, false}, // structure alone inside brackets
	} {
		end, err := Skip([]byte(c.in), 0, 0)
		if (err != nil) != c.invalid || err == nil && end != c.end {
			t.Errorf("Skip(%q) = %d, %v; want %d, invalid %v", c.in, end, err, c.end, c.invalid)
		}
	}
}

// ArrayItems, whose item reads its own element, sees the same elements as
// Array and accepts and refuses the same arrays.
func TestArrayItemsAgreesWithArray(t *testing.T) {
	for _, in := range []string{
		`[]`, `[ ]`, `[1]`, `[1,2,3]`, `[ 1 , "a" , [2,[3]] , {"k":[4]} , null ]`,
		`[1,]`, `[,1]`, `[1 2]`, `[1`, `[`, `["a"`, `[1,2]x`, `[tru]`, `[1,{]`,
	} {
		var want, got [][2]int
		wantEnd, wantErr := Array([]byte(in), 0, func(s, e int) error {
			want = append(want, [2]int{s, e})
			return nil
		})
		gotEnd, gotErr := ArrayItems([]byte(in), 0, func(s int) (int, error) {
			e, err := Value([]byte(in), s)
			if err == nil {
				got = append(got, [2]int{s, e})
			}
			return e, err
		}, 1)
		if (wantErr == nil) != (gotErr == nil) || wantErr == nil && (wantEnd != gotEnd || !reflect.DeepEqual(want, got)) {
			t.Errorf("%s: Array %v %v (end %d, err %v); ArrayItems %v (end %d, err %v)", in, want, wantErr == nil, wantEnd, wantErr, got, gotEnd, gotErr)
		}
	}
}
