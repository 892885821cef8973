// Package jsontexttest is test support, imported only by tests: reading a
// JSON value with its numbers kept as written (json.Number), and comparing
// two such values structurally, numbers by a rule each test gives (by exact
// value, by the double they read as, ...).
package jsontexttest

import (
	"bytes"
	"encoding/json"
	"testing"
)

// Decode reads the JSON value b holds, numbers as json.Number; t fails
// when b is not JSON.
func Decode(t testing.TB, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

// Same reports whether x and y, values as Decode gives them, have the same
// arrays, objects, strings, booleans and nulls, and numbers sameNumber
// takes for equal.
func Same(x, y any, sameNumber func(a, b json.Number) bool) bool {
	switch xv := x.(type) {
	case json.Number:
		yv, ok := y.(json.Number)
		return ok && sameNumber(xv, yv)
	case []any:
		yv, ok := y.([]any)
		if !ok || len(xv) != len(yv) {
			return false
		}
		for i := range xv {
			if !Same(xv[i], yv[i], sameNumber) {
				return false
			}
		}
		return true
	case map[string]any:
		yv, ok := y.(map[string]any)
		if !ok || len(xv) != len(yv) {
			return false
		}
		for k := range xv {
			if !Same(xv[k], yv[k], sameNumber) {
				return false
			}
		}
		return true
	}
	return x == y
}
