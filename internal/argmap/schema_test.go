package argmap

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// TestTypeSchema covers every row of SPEC §4.5's type table.
func TestTypeSchema(t *testing.T) {
	cases := []struct{ schema, want string }{
		{"z", `{"type":"null"}`},
		{"b", `{"type":"boolean"}`},
		{"j", `{"type":"integer"}`},
		{"i1", `{"type":"integer"}`},
		{"i2", `{"type":"integer"}`},
		{"i4", `{"type":"integer"}`},
		{"i8", `{"type":"integer"}`},
		{"u1", `{"type":"integer"}`},
		{"u2", `{"type":"integer"}`},
		{"u4", `{"type":"integer"}`},
		{"u8", `{"type":"integer"}`},
		{"f4", `{"type":"number"}`},
		{"f8", `{"type":"number"}`},
		{"s", `{"type":"string"}`},
		{"<double>f8", `{"type":"number"}`},
		{"aj", `{"type":"array","items":{"type":"integer"}}`},
		{"aas", `{"type":"array","items":{"type":"array","items":{"type":"string"}}}`},
		{"t2sj", `{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"minItems":2,"maxItems":2}`},
		{"t0", `{"type":"array","prefixItems":[],"minItems":0,"maxItems":0}`},
		{"m24names3age?j", `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":["integer","null"]}},"required":["name"],"additionalProperties":false}`},
		{"m0", `{"type":"object","properties":{},"required":[],"additionalProperties":false}`},
		{"?j", `{"type":["integer","null"]}`},
		{"??s", `{"type":["string","null"]}`},
		{"?z", `{"type":"null"}`},
		{"?aj", `{"type":["array","null"],"items":{"type":"integer"}}`},
		{"?m11xb", `{"type":["object","null"],"properties":{"x":{"type":"boolean"}},"required":["x"],"additionalProperties":false}`},
		{"<dict>at2sj", `{"type":"array","items":{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"minItems":2,"maxItems":2}}`},
		{"<std::map<$1,$2>>at2sj", `{"type":"array","items":{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"minItems":2,"maxItems":2}}`},
		{"&4Treem24dataab4kidsa^4Tree", `{"type":"object","properties":{"data":{"type":"array","items":{"type":"boolean"}},"kids":{"type":"array","items":{"type":"object"}}},"required":["data","kids"],"additionalProperties":false}`},
		{"T", `{"type":"array","items":{"type":"object","properties":{},"required":[],"additionalProperties":false}}`},
		{"T:21xaj1ys", `{"type":"array","items":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"string"}},"required":["x","y"],"additionalProperties":false}}`},
		{"F", `{"type":"string"}`},
		{"I", `{"type":"string"}`},
		{"O", `{"type":"string"}`},
	}
	for _, c := range cases {
		t.Run(c.schema, func(t *testing.T) {
			typ, err := manifest.ParseType(c.schema)
			if err != nil {
				t.Fatal(err)
			}
			got := mustJSON(t, typeSchema(typ))
			if got != c.want {
				t.Errorf("schema of %s:\n got %s\nwant %s", c.schema, got, c.want)
			}
		})
	}
}

func TestIsStrMap(t *testing.T) {
	cases := map[string]bool{
		"<dict>at2sj":    true,
		"<dict>at2s?j":   true,
		"<dict>at2<k>sj": true,
		"at2sj":          false, // no hint: a plain list of pairs
		"<list>at2sj":    false, // a hint other than dict
		"<dict>at2jj":    false, // integer keys stay pairs
		"<dict>at3sjj":   false,
		"<dict>as":       false,
	}
	for schema, want := range cases {
		typ, err := manifest.ParseType(schema)
		if err != nil {
			t.Fatal(err)
		}
		if got := isStrMap(typ); got != want {
			t.Errorf("isStrMap(%s) = %v, want %v", schema, got, want)
		}
	}
}

func TestObjectMarshal(t *testing.T) {
	cases := []struct {
		name string
		in   Object
		want string
	}{
		{"keeps order", Object{{"z", 1}, {"a", true}, {"m", nil}}, `{"z":1,"a":true,"m":null}`},
		{"empty", Object{}, `{}`},
		{"nil", nil, `{}`},
		{"no HTML escaping", Object{{"d", "Map <dict> & co"}}, `{"d":"Map <dict> & co"}`},
		{"escapes", Object{{"d", "a\"b\\c\n\t\x01"}}, `{"d":"a\"b\\c\n\t\u0001"}`},
		{"invalid UTF-8", Object{{"d", "a\xffb"}}, `{"d":"a\ufffdb"}`},
		{"unicode kept", Object{{"d", "é→"}}, `{"d":"é→"}`},
		{"nested", Object{{"o", Object{{"b", []any{"x", json.Number("12345678901234567890")}}}}, {"s", []string{"p"}}}, `{"o":{"b":["x",12345678901234567890]},"s":["p"]}`},
		{"raw compacted", Object{{"r", json.RawMessage(`[ 1, 2 ]`)}}, `{"r":[1,2]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := c.in.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != c.want {
				t.Errorf("got %s, want %s", b, c.want)
			}
			if !json.Valid(b) {
				t.Errorf("not valid JSON: %s", b)
			}
		})
	}
	if v, ok := (Object{{"a", 1}}).Get("a"); !ok || v != 1 {
		t.Errorf("Get(a) = %v, %v", v, ok)
	}
	if _, ok := (Object{{"a", 1}}).Get("b"); ok {
		t.Errorf("Get(b) found a missing key")
	}
	// Encoded inside another value, key order survives.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode([]any{Object{{"b", 1}, {"a", "<"}}}); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != "[{\"b\":1,\"a\":\"<\"}]\n" {
		t.Errorf("nested encode: %q", got)
	}
}
