package clientconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// A client's JSON config file is the user's: nexus adds or removes one
// member of one object in it and leaves every other byte as it was (other
// servers, unknown keys, indentation, and in JSONC files the comments).
// So it is edited as text, on the spans a small parser finds, never
// decoded and re-encoded.

// jsonValue is one value of a parsed document: its span, and for an object
// its members in order.
type jsonValue struct {
	kind       byte // '{', '[', '"', or 'v' for a number or literal
	start, end int  // [start, end) in the document
	members    []jsonMember
}

type jsonMember struct {
	key      string
	keyStart int
	value    *jsonValue
	comma    int // the comma after the value, -1 when none follows
}

// jsonParser parses JSON, or JSONC (comments and trailing commas, as VS Code
// and Gemini CLI read their files) when comments is set.
type jsonParser struct {
	src      []byte
	pos      int
	comments bool
}

// parseJSONDoc parses a whole document, which must be one object.
func parseJSONDoc(src []byte, comments bool) (*jsonValue, error) {
	p := &jsonParser{src: src, comments: comments}
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.pos >= len(src) || src[p.pos] != '{' {
		return nil, p.errorf("expected a JSON object ('{') at the top")
	}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.pos < len(src) {
		return nil, p.errorf("unexpected %q after the top-level object", src[p.pos])
	}
	if !comments && !json.Valid(src) { // belt and braces: the client reads it with a strict parser
		return nil, fmt.Errorf("not valid JSON")
	}
	return v, nil
}

func (p *jsonParser) errorf(format string, a ...any) error {
	line, col := 1, 1
	for _, c := range p.src[:min(p.pos, len(p.src))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	what := "JSON"
	if p.comments {
		what = "JSON (with comments)"
	}
	return fmt.Errorf("not valid %s at line %d, column %d: %s", what, line, col, fmt.Sprintf(format, a...))
}

// space skips white space and, in JSONC, comments.
func (p *jsonParser) space() error {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case p.comments && c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '/':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		case p.comments && c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '*':
			end := bytes.Index(p.src[p.pos+2:], []byte("*/"))
			if end < 0 {
				return p.errorf("a /* comment is never closed")
			}
			p.pos += 2 + end + 2
		default:
			return nil
		}
	}
	return nil
}

func (p *jsonParser) value() (*jsonValue, error) {
	if p.pos >= len(p.src) {
		return nil, p.errorf("unexpected end of file")
	}
	v := &jsonValue{start: p.pos}
	switch c := p.src[p.pos]; c {
	case '{':
		v.kind = '{'
		if err := p.object(v); err != nil {
			return nil, err
		}
	case '[':
		v.kind = '['
		if err := p.array(); err != nil {
			return nil, err
		}
	case '"':
		v.kind = '"'
		if _, err := p.str(); err != nil {
			return nil, err
		}
	default:
		v.kind = 'v'
		end := p.pos
		for end < len(p.src) && strings.IndexByte("+-.0123456789eEtruefalsn", p.src[end]) >= 0 {
			end++
		}
		var x any
		if end == p.pos || json.Unmarshal(p.src[p.pos:end], &x) != nil {
			return nil, p.errorf("expected a value, got %q", c)
		}
		p.pos = end
	}
	v.end = p.pos
	return v, nil
}

// str reads a string token and returns its decoded text.
func (p *jsonParser) str() (string, error) {
	start := p.pos
	p.pos++
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case '\\':
			p.pos += 2
			continue
		case '"':
			p.pos++
			var s string
			if err := json.Unmarshal(p.src[start:p.pos], &s); err != nil {
				p.pos = start
				return "", p.errorf("bad string: %v", err)
			}
			return s, nil
		case '\n':
			p.pos = start
			return "", p.errorf("a string runs past the end of its line")
		}
		p.pos++
	}
	p.pos = start
	return "", p.errorf("a string is never closed")
}

func (p *jsonParser) object(v *jsonValue) error {
	p.pos++ // {
	for {
		if err := p.space(); err != nil {
			return err
		}
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			if n := len(v.members); n > 0 && v.members[n-1].comma >= 0 && !p.comments {
				p.pos = v.members[n-1].comma
				return p.errorf("a comma before '}'")
			}
			p.pos++
			return nil
		}
		if len(v.members) > 0 && v.members[len(v.members)-1].comma < 0 {
			return p.errorf("expected ',' or '}' after an object member")
		}
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			return p.errorf("expected a member name in double quotes")
		}
		m := jsonMember{keyStart: p.pos, comma: -1}
		key, err := p.str()
		if err != nil {
			return err
		}
		m.key = key
		if err := p.space(); err != nil {
			return err
		}
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return p.errorf("expected ':' after member name %q", key)
		}
		p.pos++
		if err := p.space(); err != nil {
			return err
		}
		if m.value, err = p.value(); err != nil {
			return err
		}
		if err := p.space(); err != nil {
			return err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			m.comma = p.pos
			p.pos++
		}
		v.members = append(v.members, m)
	}
}

func (p *jsonParser) array() error {
	p.pos++ // [
	first, comma := true, false
	for {
		if err := p.space(); err != nil {
			return err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ']' {
			if comma && !p.comments {
				return p.errorf("a comma before ']'")
			}
			p.pos++
			return nil
		}
		if !first && !comma {
			return p.errorf("expected ',' or ']' after an array element")
		}
		if _, err := p.value(); err != nil {
			return err
		}
		first, comma = false, false
		if err := p.space(); err != nil {
			return err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			comma = true
			p.pos++
		}
	}
}

func (v *jsonValue) member(key string) *jsonMember {
	for i := range v.members {
		if v.members[i].key == key {
			return &v.members[i]
		}
	}
	return nil
}

// jsonDoc is a parsed client config: its text and its root object.
type jsonDoc struct {
	src  []byte
	root *jsonValue
}

// servers finds the object at path (e.g. ["mcpServers"]); nil when absent.
// A value on the path that is not an object is an error.
func (d *jsonDoc) servers(path []string) (*jsonValue, error) {
	v := d.root
	for i, key := range path {
		m := v.member(key)
		if m == nil {
			return nil, nil
		}
		if m.value.kind != '{' {
			return nil, fmt.Errorf("%q is not an object", strings.Join(path[:i+1], "."))
		}
		v = m.value
	}
	return v, nil
}

// raw is the text of a member's value.
func (d *jsonDoc) raw(m *jsonMember) []byte { return d.src[m.value.start:m.value.end] }

// lineIndent is the white space that starts the line holding pos.
func (d *jsonDoc) lineIndent(pos int) string {
	start := bytes.LastIndexByte(d.src[:pos], '\n') + 1
	end := start
	for end < pos && (d.src[end] == ' ' || d.src[end] == '\t') {
		end++
	}
	return string(d.src[start:end])
}

// indentUnit is one level of the file's indentation: that of the root's
// first member when it sits on a line of its own, else two spaces.
func (d *jsonDoc) indentUnit() string {
	if len(d.root.members) > 0 {
		k := d.root.members[0].keyStart
		if bytes.Contains(d.src[d.root.start:k], []byte("\n")) {
			if ind := d.lineIndent(k); ind != "" {
				return ind
			}
		}
	}
	return "  "
}

// multiline reports whether members of v go on lines of their own: as
// they do already, or for an empty object as the document's do.
func (d *jsonDoc) multiline(v *jsonValue) bool {
	if len(v.members) == 0 {
		v = d.root
		if len(v.members) == 0 {
			return true
		}
	}
	return bytes.Contains(d.src[v.start:v.end], []byte("\n"))
}

// render is a compact JSON value re-indented to sit at indent.
func render(compact []byte, indent, unit string, multiline bool) []byte {
	if !multiline {
		return compact
	}
	var b bytes.Buffer
	_ = json.Indent(&b, compact, indent, unit)
	return b.Bytes()
}

func quoteKey(k string) []byte {
	b, _ := json.Marshal(k)
	return b
}

// insertMember adds "key": value (value compact JSON) as the last member of
// obj, and returns the new text.
func (d *jsonDoc) insertMember(obj *jsonValue, key string, value []byte) []byte {
	unit := d.indentUnit()
	multi := d.multiline(obj)
	var ins []byte
	var at, cut int // insert at, replacing src[at:cut]
	if n := len(obj.members); n > 0 {
		last := obj.members[n-1]
		indent := d.lineIndent(last.keyStart)
		at = last.value.end
		sep, trail := ",", ""
		if last.comma >= 0 { // JSONC's trailing comma: add after it, with one of our own
			at, sep, trail = last.comma+1, "", ","
		}
		cut = at
		if multi {
			ins = append([]byte(sep+"\n"+indent), quoteKey(key)...)
			ins = append(ins, ": "...)
			ins = append(ins, render(value, indent, unit, true)...)
		} else {
			ins = append(append([]byte(sep), quoteKey(key)...), ':')
			ins = append(ins, value...)
		}
		ins = append(ins, trail...)
	} else {
		at, cut = obj.start+1, obj.end-1
		inside := d.src[at:cut]
		if len(bytes.TrimSpace(inside)) > 0 { // only comments inside: keep them, add after
			at = cut
			cut = at
		}
		if multi {
			outer := d.lineIndent(obj.start)
			if obj == d.root {
				outer = ""
			}
			indent := outer + unit
			ins = append([]byte("\n"+indent), quoteKey(key)...)
			ins = append(ins, ": "...)
			ins = append(ins, render(value, indent, unit, true)...)
			ins = append(ins, "\n"+outer...)
		} else {
			ins = append(append(ins, quoteKey(key)...), ':')
			ins = append(ins, value...)
		}
	}
	return splice(d.src, at, cut, ins)
}

// replaceValue puts value (compact JSON) in place of member m's value.
func (d *jsonDoc) replaceValue(obj *jsonValue, m *jsonMember, value []byte) []byte {
	indent := d.lineIndent(m.keyStart)
	return splice(d.src, m.value.start, m.value.end, render(value, indent, d.indentUnit(), d.multiline(obj)))
}

// removeMember deletes member i of obj with its comma and the space that
// went with it, so that removing the member insertMember added gives back
// the text as it was.
func (d *jsonDoc) removeMember(obj *jsonValue, i int) []byte {
	m := obj.members[i]
	switch {
	case i > 0 && i == len(obj.members)-1 && m.comma >= 0:
		// The last, with JSONC's trailing comma: the member before keeps its own.
		return splice(d.src, obj.members[i-1].comma+1, m.comma+1, nil)
	case i > 0: // from the end of the member before (its comma goes) to the end of this one
		return splice(d.src, obj.members[i-1].value.end, m.value.end, nil)
	case len(obj.members) > 1: // the first of several: up to the next member
		return splice(d.src, m.keyStart, obj.members[1].keyStart, nil)
	default: // the only one: the object becomes {}
		return splice(d.src, obj.start+1, obj.end-1, nil)
	}
}

func splice(src []byte, from, to int, ins []byte) []byte {
	out := make([]byte, 0, len(src)-(to-from)+len(ins))
	out = append(out, src[:from]...)
	out = append(out, ins...)
	return append(out, src[to:]...)
}

// nestValue wraps value in objects keyed by path: path ["a","b"] gives
// {"a":{"b":value}}.
func nestValue(path []string, value []byte) []byte {
	for i := len(path) - 1; i >= 0; i-- {
		v := append([]byte("{"), quoteKey(path[i])...)
		v = append(v, ':')
		v = append(v, value...)
		value = append(v, '}')
	}
	return value
}
