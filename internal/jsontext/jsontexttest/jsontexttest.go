// Package jsontexttest is test support, imported only by tests: reading a
// JSON value with its numbers kept as written (json.Number), and comparing
// two such values structurally, numbers by a rule each test gives (by exact
// value, by the double they read as, ...).
package jsontexttest

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"testing"
)

// Decode reads the JSON value b holds, numbers as json.Number; t fails
// when b is not JSON.
func Decode(t testing.TB, b []byte) (v any) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

// Same reports whether x and y, values as Decode gives them, have the same
// arrays, objects (the same keys), strings, booleans and nulls, and numbers
// sameNumber takes for equal.
func Same(x, y any, sameNumber func(a, b json.Number) bool) bool {
	same := func(a, b any) bool { return Same(a, b, sameNumber) }
	switch xv := x.(type) {
	case json.Number:
		yv, ok := y.(json.Number)
		return ok && sameNumber(xv, yv)
	case []any:
		yv, ok := y.([]any)
		return ok && slices.EqualFunc(xv, yv, same)
	case map[string]any:
		yv, ok := y.(map[string]any)
		return ok && maps.EqualFunc(xv, yv, same)
	}
	return x == y
}
