package eval

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nexus-mcp/nexus/internal/jsontext"
)

// jkind is the kind of a parsed JSON value.
type jkind uint8

const (
	jNull jkind = iota
	jTrue
	jFalse
	jNum
	jStr
	jArr
	jObj
)

var jkindNames = [...]string{"null", "true", "false", "number", "string", "array", "object"}

func (k jkind) String() string { return jkindNames[k] }

// jnode is a parsed JSON value that keeps object members in their order:
// expression trees, arguments, @read text and loaded files are all parsed
// into it before they are checked against a schema.
type jnode struct {
	k     jkind
	s     string  // a string's value, a number's text
	items []jnode // array items, object member values
	keys  []string
}

// get returns an object's member (the last one, if a key repeats).
func (n *jnode) get(key string) (*jnode, bool) {
	for i := len(n.keys) - 1; i >= 0; i-- {
		if n.keys[i] == key {
			return &n.items[i], true
		}
	}
	return nil, false
}

// maxJSONDepth bounds the nesting of any value the evaluator reads: JSON
// (jsontext's bound) and msgpack alike.
const maxJSONDepth = jsontext.MaxDepth

// parseJSON reads one strict JSON text (RFC 8259, UTF-8), with nothing but
// whitespace after it, into a tree. jsontext checks the syntax and finds
// each value's span; a number keeps its text, so that integers of any size
// and -0 reach the decoder as written. Unlike encoding/json, a string of
// invalid UTF-8 is an error, not U+FFFD: morloc's reader refuses it too.
func parseJSON(b []byte) (jnode, error) {
	t := treeBuilder{b: b}
	n, end, err := t.value(jsontext.SkipSpace(b, 0), 0)
	if err == nil {
		if rest := jsontext.SkipSpace(b, end); rest != len(b) {
			err = &jsontext.SyntaxError{Offset: rest, Msg: "unexpected " + showAt(b, rest) + " after the JSON value"}
		}
	}
	if err != nil {
		var se *jsontext.SyntaxError
		if !errors.As(err, &se) {
			return jnode{}, fmt.Errorf("invalid JSON: %w", err)
		}
		msg := se.Msg
		if strings.HasPrefix(msg, "expected ") { // say what came instead
			msg += ", got " + showAt(b, se.Offset)
		}
		return jnode{}, fmt.Errorf("invalid JSON at offset %d: %s", se.Offset, msg)
	}
	return n, nil
}

// showAt names the character at b[i] for an error message.
func showAt(b []byte, i int) string {
	if i >= len(b) {
		return "end of input"
	}
	r, _ := utf8.DecodeRune(b[i:])
	return strconv.QuoteRune(r)
}

// treeBuilder turns the spans jsontext finds into jnodes.
type treeBuilder struct {
	b []byte
	// Scratch stacks: an array's items and an object's members gather
	// here and are copied out once, at their exact size.
	items []jnode
	keys  []string
}

// value reads the value at b[i], nested inside depth arrays and objects,
// and returns it with the index just after it.
func (t *treeBuilder) value(i, depth int) (jnode, int, error) {
	b := t.b
	if i < len(b) {
		switch c := b[i]; {
		case c == '"':
			s, end, err := t.str(i)
			return jnode{k: jStr, s: s}, end, err
		case c == '-' || c-'0' < 10:
			end, err := jsontext.Number(b, i)
			return jnode{k: jNum, s: string(b[i:end])}, end, err
		case c == '[':
			return t.array(i, depth+1)
		case c == '{':
			return t.object(i, depth+1)
		}
	}
	// A literal, or the error for what is none.
	end, err := jsontext.ValueIn(b, i, depth)
	if err != nil {
		return jnode{}, end, err
	}
	switch b[i] {
	case 't':
		return jnode{k: jTrue}, end, nil
	case 'f':
		return jnode{k: jFalse}, end, nil
	}
	return jnode{k: jNull}, end, nil
}

// array reads the array at b[i]; depth is its own nesting depth.
func (t *treeBuilder) array(i, depth int) (jnode, int, error) {
	base := len(t.items)
	end, err := jsontext.ArrayItems(t.b, i, func(start int) (int, error) {
		v, end, err := t.value(start, depth)
		t.items = append(t.items, v)
		return end, err
	}, depth)
	n := jnode{k: jArr}
	if err == nil && len(t.items) > base {
		n.items = append([]jnode(nil), t.items[base:]...)
	}
	clear(t.items[base:]) // let the scratch stack hold no subtrees
	t.items = t.items[:base]
	return n, end, err
}

// object reads the object at b[i], every member in order, a repeated key
// too; depth is its own nesting depth.
func (t *treeBuilder) object(i, depth int) (jnode, int, error) {
	base, kbase := len(t.items), len(t.keys)
	end, err := jsontext.ObjectMembers(t.b, i, func(key []byte, escaped bool, start int) (int, error) {
		k, err := t.decode(key, escaped, cap(t.b)-cap(key)) // key is b[k:kend]: k is cap(b)-cap(key)
		if err != nil {
			return start, err
		}
		v, end, err := t.value(start, depth)
		t.keys = append(t.keys, k)
		t.items = append(t.items, v)
		return end, err
	}, depth)
	n := jnode{k: jObj}
	if err == nil && len(t.items) > base {
		n.keys = append([]string(nil), t.keys[kbase:]...)
		n.items = append([]jnode(nil), t.items[base:]...)
	}
	clear(t.items[base:])
	t.items, t.keys = t.items[:base], t.keys[:kbase]
	return n, end, err
}

// str reads the string at b[i].
func (t *treeBuilder) str(i int) (string, int, error) {
	end, escaped, err := jsontext.String(t.b, i)
	if err != nil {
		return "", end, err
	}
	s, err := t.decode(t.b[i:end], escaped, i)
	return s, end, err
}

// decode turns a string token that jsontext checked, found at b[at], into
// its text.
func (t *treeBuilder) decode(tok []byte, escaped bool, at int) (string, error) {
	if !escaped {
		return string(tok[1 : len(tok)-1]), nil
	}
	// Escapes are ASCII: the token is valid UTF-8 exactly when its text is.
	if !utf8.Valid(tok) {
		bad := 0
		for r, size := rune(0), 0; ; bad += size {
			if r, size = utf8.DecodeRune(tok[bad:]); r == utf8.RuneError && size == 1 {
				break
			}
		}
		return "", &jsontext.SyntaxError{Offset: at + bad, Msg: "invalid UTF-8 in a string"}
	}
	return jsontext.Unquote(tok), nil
}
