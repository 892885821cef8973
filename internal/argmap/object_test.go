package argmap

import (
	"encoding/json"
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
