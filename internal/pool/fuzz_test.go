package pool

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

func frameOf(payload string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(payload)))
	return append(b, payload...)
}

// FuzzPoolFrames: whatever a pool writes on fd 4, nexus's frame reader and
// message decoder never panic; they return payloads within the protocol's
// bounds, messages with the members their type requires, or a
// *ProtocolError.
func FuzzPoolFrames(f *testing.F) {
	for _, seed := range [][]byte{
		frameOf(`{"type":"ready","protocol":1,"mids":[1,2],"concurrent":true}`),
		frameOf(`{"type":"ready","protocol":2,"mids":[1],"concurrent":true,"arrays":["i8","f8"]}`),
		append([]byte{0x80, 0, 0, 8, 1, 0, 0, 0, 0, 0, 0, 0}, frameOf(`{"type":"result","id":1,"value":null,"arrays":[{"path":[],"dtype":"i8","shape":[1]}]}`)...),
		append(frameOf(`{"type":"result","id":1,"value":[1,"a",null],"content":[{"type":"text","text":"x"}]}`), frameOf(`{"type":"error","id":2,"message":"m","traceback":"t"}`)...),
		frameOf(`{"type":"progress","id":3,"progress":1.5,"total":2,"message":"m"}`),
		frameOf(`{"type":"log","level":"warning","data":{"k":1}}`),
		frameOf(`{"type":"ask","id":4,"ask":1,"kind":"elicit","params":{"message":"m"}}`), frameOf(`{"type":"ask","id":4,"ask":"1","kind":"roots"}`),
		frameOf(`{"type":"result","id":18446744073709551615,"value":1}`),
		frameOf(`{"type":"result","id":-1}`), frameOf(`{"type":"progress","id":1}`), frameOf(`{}`), frameOf(`[]`),
		frameOf(`{"type":"result","content":5}`), {0, 0, 0, 1, '{'}, {0xff, 0xff, 0xff, 0xff}, {0, 0}, {},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bufio.NewReader(bytes.NewReader(data))
		consumed := 0
		for {
			payload, blob, err := readFrame(r)
			if err != nil {
				var pe *ProtocolError
				if !errors.Is(err, io.EOF) && !errors.As(err, &pe) {
					t.Fatalf("readFrame: %v (%T), want io.EOF or a *ProtocolError", err, err)
				}
				return
			}
			consumed += 4 + len(payload)
			if (!blob && len(payload) < minFrameSize) || len(payload) > MaxFrameSize || consumed > len(data) {
				t.Fatalf("a payload of %d bytes after %d of %d bytes", len(payload), consumed, len(data))
			}
			if blob {
				continue
			}
			msg, err := decodeInbound(payload)
			if err != nil {
				var pe *ProtocolError
				if !errors.As(err, &pe) {
					t.Fatalf("decodeInbound(%q): %v (%T), want a *ProtocolError", payload, err, err)
				}
				continue
			}
			switch {
			case msg.Type == "":
				t.Fatalf("decodeInbound(%q) has no type", payload)
			case (msg.Type == typeResult || msg.Type == typeError || msg.Type == typeProgress) && msg.ID == nil:
				t.Fatalf("decodeInbound(%q): a %s without an id", payload, msg.Type)
			case msg.Type == typeProgress && msg.Progress == nil:
				t.Fatalf("decodeInbound(%q): progress without a value", payload)
			case msg.Type == typeResult && msg.Value == nil:
				t.Fatalf("decodeInbound(%q): result without a value", payload)
			case msg.Type == typeAsk && (msg.ID == nil || msg.Ask == nil || msg.Kind == ""):
				t.Fatalf("decodeInbound(%q): an ask without its id, number or kind", payload)
			}
			if msg.Content != nil {
				_ = checkContent(msg.Content) // must not panic either
			}
		}
	})
}
