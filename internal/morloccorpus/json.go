package morloccorpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Member is one key and value of an Object.
type Member struct {
	Key   string
	Value any
}

// Object is a JSON object in insertion order, as serde_json keeps it with
// preserve_order (morloc's Cargo.toml).
type Object []Member

// Get is the value of key k.
func (o Object) Get(k string) (any, bool) {
	for _, m := range o {
		if m.Key == k {
			return m.Value, true
		}
	}
	return nil, false
}

// Insert replaces a present key where it stands (IndexMap::insert), else
// appends it.
func (o Object) Insert(k string, v any) Object {
	for i := range o {
		if o[i].Key == k {
			o[i].Value = v
			return o
		}
	}
	return append(o, Member{k, v})
}

// Decode reads one JSON value: objects as Object, arrays as []any,
// numbers as json.Number (their text kept), so that Pretty can print it
// again byte for byte.
func Decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	if d == '{' {
		o := Object{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			o = append(o, Member{k.(string), v})
		}
		_, err := dec.Token()
		return o, err
	}
	a := []any{}
	for dec.More() {
		v, err := decodeValue(dec)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
	}
	_, err = dec.Token()
	return a, err
}

// Pretty prints v as serde_json's to_string_pretty does (members in their
// order, two-space indented), and a newline, as morloc prints a document.
func Pretty(v any) string {
	var b strings.Builder
	write(&b, v, "")
	b.WriteByte('\n')
	return b.String()
}

func write(b *strings.Builder, v any, indent string) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int:
		b.WriteString(strconv.Itoa(x))
	case json.Number:
		b.WriteString(x.String())
	case string:
		writeString(b, x)
	case []any:
		writeItems(b, '[', ']', len(x), indent, func(i int) { write(b, x[i], indent+"  ") })
	case Object:
		writeItems(b, '{', '}', len(x), indent, func(i int) {
			writeString(b, x[i].Key)
			b.WriteString(": ")
			write(b, x[i].Value, indent+"  ")
		})
	default:
		panic(fmt.Sprintf("morloccorpus.Pretty: %T", v))
	}
}

// writeItems writes an array or object of n items, one a line, each
// written by item after its indent; an empty one as [] or {}.
func writeItems(b *strings.Builder, open, close byte, n int, indent string, item func(i int)) {
	b.WriteByte(open)
	if n > 0 {
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("\n" + indent + "  ")
			item(i)
		}
		b.WriteString("\n" + indent)
	}
	b.WriteByte(close)
}

// writeString escapes as serde_json does: \" \\ \b \f \n \r \t, other
// control characters as \u00XX, everything else (non-ASCII included) as is.
func writeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}
