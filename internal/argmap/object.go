package argmap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"unicode/utf8"
)

// Object is a JSON object that keeps its key order when marshalled (SPEC §4.5
// fixes the key order of tool objects and schemas).
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
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case []string:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, e)
		}
		b.WriteByte(']')
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

const hexDigits = "0123456789abcdef"

// writeString writes s as a JSON string: quotes, backslashes and control
// characters escaped, invalid UTF-8 replaced by U+FFFD, HTML left alone.
func writeString(b *bytes.Buffer, s string) {
	b.Write(appendString(b.AvailableBuffer(), s))
}

// appendString writes s as a JSON string: '"', '\\' and control characters
// escaped, invalid UTF-8 as \ufffd, everything else as it is.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, `\n`...)
			case '\r':
				b = append(b, `\r`...)
			case '\t':
				b = append(b, `\t`...)
			case '\b':
				b = append(b, `\b`...)
			case '\f':
				b = append(b, `\f`...)
			default:
				b = append(b, `\u00`...)
				b = append(b, hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
