package argmap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// oracleResultValue is ResultValue as it was before the one-pass writer: the
// oracle FuzzResultValue compares the writer with. It turns a pool's result into the value a client sees, compact: a
// string-keyed Map (sent by pools as an object) becomes the list of
// [key, value] pairs its type declares, at any depth; numbers are written in
// one canonical form for their declared type (a Real 1.0 as 1, 0.1 as 0.1,
// an Int 2.0 as 2), so that Python, R and C++ pools give the same text for
// the same value; everything else passes through unchanged.
func oracleResultValue(ret *manifest.Return, v json.RawMessage) (json.RawMessage, error) {
	var b bytes.Buffer
	w := &oracleWalker{b: &b}
	if ret == nil || ret.T == nil || !w.oracleHas(ret.T) {
		if err := json.Compact(&b, v); err != nil {
			return nil, fmt.Errorf("result is not valid JSON: %w", err)
		}
		return json.RawMessage(b.Bytes()), nil
	}
	if !json.Valid(v) {
		return nil, fmt.Errorf("result is not valid JSON")
	}
	if err := w.walk(ret.T, v); err != nil {
		return nil, err
	}
	return json.RawMessage(b.Bytes()), nil
}

// oracleWalker rewrites string-keyed Maps and numbers in a raw result,
// copying every part of the value whose type holds neither verbatim.
type oracleWalker struct {
	b     *bytes.Buffer
	scope []oracleScoped // enclosing recursive declarations, innermost last
}

type oracleScoped struct {
	decl   *manifest.Type
	hasMap bool
}

// hasStrMap reports whether a value of type t can hold a string-keyed Map
// or a number (what the walker rewrites), following back-references to the
// declarations in scope.
func (w *oracleWalker) oracleHas(t *manifest.Type) bool {
	if t == nil {
		return false
	}
	if isStrMap(t) || t.Kind == manifest.Int || t.Kind == manifest.Float {
		return true
	}
	if t.Kind == manifest.BackRef {
		for i := len(w.scope) - 1; i >= 0; i-- {
			if w.scope[i].decl.Name == t.Name {
				return w.scope[i].hasMap
			}
		}
		// A reference to the declaration being examined adds nothing new.
		return false
	}
	if w.oracleHas(t.Elem) {
		return true
	}
	for _, it := range t.Items {
		if w.oracleHas(it) {
			return true
		}
	}
	for _, f := range t.Fields {
		if w.oracleHas(f.Type) {
			return true
		}
	}
	return false
}

func (w *oracleWalker) walk(t *manifest.Type, raw json.RawMessage) error {
	if t.Kind == manifest.BackRef {
		for i := len(w.scope) - 1; i >= 0; i-- {
			if w.scope[i].decl.Name == t.Name {
				return w.walk(w.scope[i].decl, raw)
			}
		}
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || !w.oracleHas(t) {
		return json.Compact(w.b, raw)
	}
	switch t.Kind {
	case manifest.Int, manifest.Float:
		if isNumberText(string(raw)) {
			return w.number(t, string(raw))
		}
	case manifest.Recursive:
		w.scope = append(w.scope, oracleScoped{t, w.oracleHas(t.Elem)})
		err := w.walk(t.Elem, raw)
		w.scope = w.scope[:len(w.scope)-1]
		return err
	case manifest.Optional:
		return w.walk(t.Elem, raw)
	case manifest.List:
		if raw[0] == '{' && isStrMap(t) {
			pair := t.Elem.Unwrap()
			w.b.WriteByte('[')
			first := true
			err := oracleEachMember(raw, func(k string, v json.RawMessage) error {
				if !first {
					w.b.WriteByte(',')
				}
				first = false
				w.b.WriteByte('[')
				writeString(w.b, k)
				w.b.WriteByte(',')
				if err := w.walk(pair.Items[1], v); err != nil {
					return err
				}
				w.b.WriteByte(']')
				return nil
			})
			w.b.WriteByte(']')
			return err
		}
		if raw[0] == '[' {
			return w.array(raw, func(int) *manifest.Type { return t.Elem })
		}
	case manifest.Tuple:
		if raw[0] == '[' {
			return w.array(raw, func(i int) *manifest.Type {
				if i < len(t.Items) {
					return t.Items[i]
				}
				return nil
			})
		}
	case manifest.Record:
		if raw[0] == '{' {
			w.b.WriteByte('{')
			first := true
			err := oracleEachMember(raw, func(k string, v json.RawMessage) error {
				if !first {
					w.b.WriteByte(',')
				}
				first = false
				writeString(w.b, k)
				w.b.WriteByte(':')
				for _, f := range t.Fields {
					if f.Key == k {
						return w.walk(f.Type, v)
					}
				}
				return json.Compact(w.b, v)
			})
			w.b.WriteByte('}')
			return err
		}
	}
	// The value does not have the shape its type declares: pass it on as is.
	return json.Compact(w.b, raw)
}

// number writes a numeric result canonically: an Int as its integer digits
// (exact at any size), a Real as the shortest text that reads back as the
// same float64, as encoding/json writes it. A number that does not fit its
// type (an Int 2.5, a Real 1e999) is copied as the pool wrote it.
func (w *oracleWalker) number(t *manifest.Type, text string) error {
	if t.Kind == manifest.Int {
		if out, msg := normalizeInt(text, "j"); msg == "" {
			w.b.WriteString(out)
			return nil
		}
	} else if f, err := strconv.ParseFloat(text, 64); err == nil {
		if out, err := json.Marshal(f); err == nil {
			w.b.Write(out)
			return nil
		}
	}
	w.b.WriteString(text)
	return nil
}

func (w *oracleWalker) array(raw json.RawMessage, elem func(int) *manifest.Type) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return err
	}
	w.b.WriteByte('[')
	for i := 0; dec.More(); i++ {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		if i > 0 {
			w.b.WriteByte(',')
		}
		var err error
		if et := elem(i); et != nil {
			err = w.walk(et, v)
		} else {
			err = json.Compact(w.b, v)
		}
		if err != nil {
			return err
		}
	}
	w.b.WriteByte(']')
	return nil
}

// eachMember calls fn for each member of a JSON object, in document order.
func oracleEachMember(raw json.RawMessage, fn func(string, json.RawMessage) error) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

// FuzzResultValue: the one-pass writer gives what the old decoding walker
// gave, for every result a pool may send, of every type, except that it
// refuses a value of the wrong type, which the old walker passed on.
func FuzzResultValue(f *testing.F) {
	schemas := []string{"j", "f8", "aj", "af8", "aaf8", "<dict>at2sj", "<dict>at2saf8", "m24names3agej", "?aj",
		"t2js", "&4Treem24datai14kidsa^4Tree", "s", "ab", "am11vf8", "<dict>m21xj1yaf8",
		"a:2j", "a:2a:3f8", "*", "m11x*", "a*", "&4Listt2j?^4List", "<dict>a:1t2sj"}
	for i, s := range []string{`1`, `2.0`, `1e3`, `0.1`, `1e999`, `-0`, `[1,2.5,"x"]`, `{"a":1,"b":[1.0]}`, `[[1,2],[3]]`,
		`{"name":"x","age":3.0,"extra":[1]}`, `null`, `[1, 2 ,3]`, `{"data":1.0,"kids":[{"data":2,"kids":[]}]}`,
		`"s"`, `[true,false]`, `[{"v":1}]`, `{"x":2.0,"y":[1,2]}`, `{"a":`, `[1,]`, `{"\u0061":1}`, "\"\xff\"",
		`12345678901234567890123`, `1.5e300`, `[1,2.0]`, `[[1,2,3],[4,5,6.5]]`, `[1,[2,null]]`, `{"x":[1.0]}`} {
		f.Add(uint8(i), []byte(s))
	}
	f.Fuzz(func(t *testing.T, which uint8, raw []byte) {
		ty, err := manifest.ParseType(schemas[int(which)%len(schemas)])
		if err != nil {
			t.Fatal(err)
		}
		ret := &manifest.Return{T: ty}
		want, werr := oracleResultValue(ret, raw)
		got, gerr := ResultValue(ret, ndarray.Value{JSON: raw})
		if _, mismatch := gerr.(*TypeMismatch); mismatch {
			// The old walker passed a value of the wrong type on as it was.
			if werr != nil {
				t.Fatalf("%s %q: a type mismatch (%v), but the old walker found it is not JSON: %v", ty, raw, gerr, werr)
			}
			return
		}
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%s %q: error %v, the old walker's %v", ty, raw, gerr, werr)
		}
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("%s %q: %s, the old walker gave %s", ty, raw, got, want)
		}
	})
}
