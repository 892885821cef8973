package argmap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/nexus-mcp/nexus/internal/jsontext"
)

// Object is a JSON object that keeps its key order when marshalled
// (docs/spec.md §4.5 fixes the key order of tool objects and schemas).
type Object []Member

// Member is one key/value pair of an Object.
type Member struct {
	Key   string
	Value any
}

// MarshalJSON writes the members in order, compactly, without HTML escaping
// (so a description holding `<` stays readable, as morloc prints it).
func (o Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := writeJSON(&b, o); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Get returns the value of key and whether it is present.
func (o Object) Get(key string) (any, bool) {
	for _, m := range o {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// set replaces key's value, or appends the member when key is absent.
func (o Object) set(key string, v any) Object {
	for i := range o {
		if o[i].Key == key {
			o[i].Value = v
			return o
		}
	}
	return append(o, Member{key, v})
}

// clone copies o deeply enough that nested Objects and slices can be changed
// without touching the original.
func (o Object) clone() Object {
	c := make(Object, len(o))
	for i, m := range o {
		c[i] = Member{m.Key, cloneValue(m.Value)}
	}
	return c
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case Object:
		return x.clone()
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = cloneValue(e)
		}
		return c
	}
	return v
}

// writeJSON encodes the values argmap builds and decodes: nil, bool, string,
// json.Number, json.RawMessage, int, Object, []any, []string, map[string]any.
func writeJSON(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case string:
		writeString(b, x)
	case json.Number:
		b.WriteString(string(x))
	case int:
		fmt.Fprintf(b, "%d", x)
	case json.RawMessage:
		if err := json.Compact(b, x); err != nil {
			return err
		}
	case Object:
		b.WriteByte('{')
		for i, m := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, m.Key)
			b.WriteByte(':')
			if err := writeJSON(b, m.Value); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		return writeArray(b, x)
	case []string:
		return writeArray(b, x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			if err := writeJSON(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		// Anything else (structs, other maps and slices) as encoding/json
		// writes it, without HTML escaping.
		var tmp bytes.Buffer
		enc := json.NewEncoder(&tmp)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return fmt.Errorf("argmap: cannot encode %T as JSON: %w", v, err)
		}
		b.Write(bytes.TrimSuffix(tmp.Bytes(), []byte("\n")))
	}
	return nil
}

// writeArray writes xs as a JSON array, each element by writeJSON.
func writeArray[E any](b *bytes.Buffer, xs []E) error {
	b.WriteByte('[')
	for i, e := range xs {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := writeJSON(b, e); err != nil {
			return err
		}
	}
	b.WriteByte(']')
	return nil
}

// writeString writes s as a JSON string, by the one rule nexus writes
// strings with (jsontext.AppendString: as encoding/json without HTML
// escaping, invalid UTF-8 as U+FFFD, U+2028 and U+2029 escaped).
func writeString(b *bytes.Buffer, s string) {
	b.Write(jsontext.AppendQuoted(b.AvailableBuffer(), s))
}
