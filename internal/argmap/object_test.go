package argmap

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// Objects keep key order, never escape HTML, and take any value
// encoding/json can write (the MCP layer builds its results with them).
func TestObjectMarshalAnyValue(t *testing.T) {
	type info struct {
		Name string `json:"name"`
	}
	o := Object{
		{Key: "z", Value: "<a&b>"},
		{Key: "a", Value: Object{{Key: "n", Value: int64(3)}, {Key: "s", Value: info{"x<y"}}}},
		{Key: "m", Value: map[string]string{"k": "v"}},
		{Key: "raw", Value: json.RawMessage(` [1, 2] `)},
		{Key: "none", Value: nil},
	}
	got, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	// json.Marshal re-escapes HTML in MarshalJSON output; the object's own bytes must not.
	own, _ := o.MarshalJSON()
	want := `{"z":"<a&b>","a":{"n":3,"s":{"name":"x<y"}},"m":{"k":"v"},"raw":[1,2],"none":null}`
	if string(own) != want {
		t.Errorf("MarshalJSON:\n got %s\nwant %s", own, want)
	}
	var back map[string]any
	if json.Unmarshal(got, &back) != nil || back["z"] != "<a&b>" {
		t.Errorf("json.Marshal of an Object is not valid JSON: %s", got)
	}
	if _, err := (Object{{Key: "c", Value: make(chan int)}}).MarshalJSON(); err == nil {
		t.Error("a channel was encoded")
	}
}

// An Object writes its strings, keys and values alike, by the rule
// encoding/json's Encoder follows without HTML escaping, the rule of its
// own fallback for other values: one rule whichever way a string goes out.
func TestObjectStringsAsEncodingJSON(t *testing.T) {
	for _, s := range []string{"plain", "q\"b\\", "\x00\x01\x1f\b\f\n\r\t\x7f", "line\u2028para\u2029end", "bad\xffutf8\xc3", "<a&b>", "é€𝄞"} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(map[string]string{s: s}); err != nil {
			t.Fatal(err)
		}
		got, err := Object{{Key: s, Value: s}}.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != strings.TrimSuffix(want.String(), "\n") {
			t.Errorf("%q:\n got %s\nwant %s", s, got, want.Bytes())
		}
	}
}
