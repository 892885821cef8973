package mcp

import (
	"io"
	"unicode/utf8"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/jsontext"
)

// streamMin is the value text from which a tools/call reply goes out in
// pieces (writeStreamed) rather than built whole: the value's text is
// already in memory once, and a second, escaped copy of it as large is
// garbage the moment it is written.
const streamMin = 1 << 20

// streamPiece is how much of a value's text is escaped and written at a
// time.
const streamPiece = 64 << 10

// streamed reports whether r is a reply to send with writeStreamed.
func streamed(r *Response) bool {
	res, ok := r.Result.(*CallToolResult)
	if !ok || r.Error != nil {
		return false
	}
	for _, c := range res.Content {
		if large(c) {
			return true
		}
	}
	return false
}

// large reports whether a content block is a value's text to stream.
func large(c any) bool {
	switch v := c.(type) {
	case valueText:
		return len(v) >= streamMin
	case lazyText:
		return true
	}
	return false
}

// splitStreamed encodes a tools/call reply with its large value text left
// out: the line before the text, what writes the text escaped, and the
// line after it, so that head, body's bytes and tail are the bytes
// marshalLine would write.
func splitStreamed(r *Response) (head []byte, body func(io.Writer) error, tail []byte, err error) {
	res := r.Result.(*CallToolResult)
	blocks := make([]any, len(res.Content))
	for i, c := range res.Content {
		if body == nil && large(c) {
			switch v := c.(type) {
			case valueText:
				body = func(w io.Writer) error { return writeEscaped(w, v) }
			case lazyText:
				body = v.writeEscaped
			}
			blocks[i] = valueText(nil)
			continue
		}
		blocks[i] = c
	}
	shell := *res
	shell.Content = blocks
	line, err := marshalLine(&Response{ID: r.ID, Result: &shell})
	if err != nil {
		return nil, nil, nil, err
	}
	// The empty text block's `"text":""` is where the large text goes.
	cut := indexEmptyText(line)
	return line[:cut], body, line[cut:], nil
}

// writeStreamed writes what splitStreamed split: head, the text escaped a
// piece at a time, tail.
func writeStreamed(w io.Writer, head []byte, body func(io.Writer) error, tail []byte) error {
	if _, err := w.Write(head); err != nil {
		return err
	}
	if err := body(w); err != nil {
		return err
	}
	_, err := w.Write(tail)
	return err
}

// indexEmptyText finds the offset just inside the quotes of the first
// `"type":"text","text":""` in a reply line.
func indexEmptyText(line []byte) int {
	const empty = `{"type":"text","text":""}`
	for i := 0; i+len(empty) <= len(line); i++ {
		if string(line[i:i+len(empty)]) == empty {
			return i + len(empty) - 2
		}
	}
	return len(line) // not reached: the block was just written
}

// writeEscaped writes text escaped as the inside of a JSON string, a piece
// at a time: plain pieces (a numeric value's text is all plain) go out as
// they are, from text itself.
func writeEscaped(w io.Writer, text []byte) error {
	var scratch []byte
	return writeEscapedPieces(w, text, &scratch)
}

// writeEscapedPieces is writeEscaped with the caller's scratch buffer.
func writeEscapedPieces(w io.Writer, text []byte, scratch *[]byte) error {
	for len(text) > 0 {
		n := min(streamPiece, len(text))
		for n < len(text) && !utf8.RuneStart(text[n]) {
			n++ // never split a rune: it would be taken for invalid UTF-8
		}
		piece := text[:n]
		text = text[n:]
		if !jsontext.Plain(piece) {
			*scratch = jsontext.AppendStringBody((*scratch)[:0], piece)
			piece = *scratch
		}
		if _, err := w.Write(piece); err != nil {
			return err
		}
	}
	return nil
}

// lazyText is the text block of a large value whose text is written from
// the pool's arrays while the reply goes out (argmap.LazyResultValue),
// never whole: in a reply written whole (a batch's, over HTTP) it is
// escaped straight into the reply.
type lazyText struct{ v *argmap.ResultText }

func (l lazyText) appendJSON(b []byte) []byte {
	b = append(b, `{"type":"text","text":"`...)
	_ = l.v.WriteTo(streamPiece, func(p []byte) error { // emit never fails
		b = jsontext.AppendStringBody(b, p)
		return nil
	})
	return append(b, `"}`...)
}

func (l lazyText) MarshalJSON() ([]byte, error) { return l.appendJSON(nil), nil }

// writeEscaped writes the text escaped, a piece at a time.
func (l lazyText) writeEscaped(w io.Writer) error {
	var scratch []byte
	return l.v.WriteTo(streamPiece, func(p []byte) error { return writeEscapedPieces(w, p, &scratch) })
}
