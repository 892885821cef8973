package pool

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/memmark"
)

func TestFrameRoundTrip(t *testing.T) {
	for _, size := range []int{2, 19, 4096, 70_000, 1 << 20} {
		payload := []byte(`"` + strings.Repeat("é", (size-2)/2) + strings.Repeat("x", (size-2)%2) + `"`)
		if len(payload) != size {
			t.Fatalf("test payload has %d bytes, want %d", len(payload), size)
		}
		var buf bytes.Buffer
		if err := writeFrame(&buf, payload); err != nil {
			t.Fatalf("size %d: writeFrame: %v", size, err)
		}
		if got := binary.BigEndian.Uint32(buf.Bytes()); int(got) != size {
			t.Errorf("size %d: header says %d", size, got)
		}
		got, blob, err := readFrame(&buf)
		if err != nil || blob {
			t.Fatalf("size %d: readFrame: blob %v, %v", size, blob, err)
		}
		if !bytes.Equal(got, payload) {
			t.Errorf("size %d: payload changed in the round trip", size)
		}
		if _, _, err := readFrame(&buf); err != io.EOF {
			t.Errorf("size %d: after the only frame, readFrame = %v, want io.EOF", size, err)
		}
	}
}

// The bytes of the shutdown frame (docs/internals.md, "Frames").
func TestShutdownFrameBytes(t *testing.T) {
	var buf bytes.Buffer
	if err := writeFrame(&buf, shutdownFrame); err != nil {
		t.Fatal(err)
	}
	const want = "000000137b2274797065223a2273687574646f776e227d"
	if got := hex.EncodeToString(buf.Bytes()); got != want {
		t.Errorf("shutdown frame = %s, want %s", got, want)
	}
}

func TestReadFrameRejects(t *testing.T) {
	header := func(n uint32) []byte { return binary.BigEndian.AppendUint32(nil, n) }
	tests := []struct {
		name  string
		input []byte
		want  string
	}{
		{"oversized length", header(MaxFrameSize + 1), "frame length 1073741825 is outside 2..1073741824"},
		{"largest blob length", header(1<<32 - 1), "blob length 2147483647 is over 1073741824"},
		{"oversized blob", header(blobBit | (MaxFrameSize + 1)), "blob length 1073741825 is over"},
		{"cut blob", append(header(blobBit|8), 1, 2, 3), "end of stream inside a frame of 8 bytes"},
		{"empty frame", header(0), "frame length 0 is outside"},
		{"one byte frame", append(header(1), '1'), "frame length 1 is outside"},
		{"cut header", []byte{0, 0}, "end of stream inside a frame header"},
		{"cut payload", append(header(10), `{"a"`...), "end of stream inside a frame of 10 bytes"},
		{"no payload", header(10), "end of stream inside a frame of 10 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := readFrame(bytes.NewReader(tt.input))
			var pe *ProtocolError
			if !errors.As(err, &pe) {
				t.Fatalf("readFrame = %v, want a *ProtocolError", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestWriteFrameRejectsOversized(t *testing.T) {
	var buf bytes.Buffer
	err := writeFrame(&buf, make([]byte, MaxFrameSize+1))
	var pe *ProtocolError
	if !errors.As(err, &pe) {
		t.Fatalf("writeFrame of %d bytes = %v, want a *ProtocolError", MaxFrameSize+1, err)
	}
	if buf.Len() != 0 {
		t.Errorf("writeFrame wrote %d bytes of a frame it refused", buf.Len())
	}
	if err := writeFrame(&buf, nil); err == nil {
		t.Error("writeFrame accepted an empty payload")
	}
}

func TestDecodeInbound(t *testing.T) {
	tests := []struct {
		name    string
		payload string
		wantErr string // "" for success
		check   func(*inbound) bool
	}{
		{"result keeps a wide integer", `{"type":"result","id":3,"value":123456789012345678901234567890}`, "",
			func(m *inbound) bool { return *m.ID == 3 && string(m.Value) == "123456789012345678901234567890" }},
		{"result without value is null", `{"type":"result","id":4}`, "",
			func(m *inbound) bool { return string(m.Value) == "null" }},
		{"unknown members are ignored", `{"type":"progress","id":1,"progress":2.5,"total":5,"colour":"red"}`, "",
			func(m *inbound) bool { return *m.Progress == 2.5 && *m.Total == 5 }},
		{"unknown types pass", `{"type":"telemetry","x":1}`, "",
			func(m *inbound) bool { return m.Type == "telemetry" }},
		{"log without id", `{"type":"log","level":"info","data":"hi"}`, "",
			func(m *inbound) bool { return m.ID == nil && string(m.Data) == `"hi"` }},
		{"not JSON", `{"type":`, "bad message", nil},
		{"not an object", `[1,2]`, "bad message", nil},
		{"no type", `{"id":1}`, "message without a type", nil},
		{"result without id", `{"type":"result","value":1}`, "result message without an id", nil},
		{"error without id", `{"type":"error","message":"x"}`, "error message without an id", nil},
		{"progress without value", `{"type":"progress","id":1}`, "without a progress value", nil},
		{"progress not a number", `{"type":"progress","id":1,"progress":"half"}`, "bad message", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := decodeInbound([]byte(tt.payload))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("decodeInbound = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("decodeInbound: %v", err)
			}
			if !tt.check(m) {
				t.Errorf("decoded %+v", m)
			}
		})
	}
}

// The bytes of a blob of the int64s 1 and 2 (docs/internals.md, "Frames").
func TestBlobFrameBytes(t *testing.T) {
	var buf bytes.Buffer
	data := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 1), 2)
	if err := writeBlob(&buf, data); err != nil {
		t.Fatal(err)
	}
	const want = "800000100100000000000000" + "0200000000000000"
	if got := hex.EncodeToString(buf.Bytes()); got != want {
		t.Errorf("blob frame = %s, want %s", got, want)
	}
	got, blob, err := readFrame(&buf)
	if err != nil || !blob || !bytes.Equal(got, data) {
		t.Errorf("readFrame = %x, blob %v, %v; want %x, a blob", got, blob, err, data)
	}
	var empty bytes.Buffer
	if err := writeBlob(&empty, nil); err != nil {
		t.Fatal(err)
	}
	if got, blob, err := readFrame(&empty); err != nil || !blob || len(got) != 0 {
		t.Errorf("empty blob: readFrame = %x, blob %v, %v", got, blob, err)
	}
}

// A header claiming a large body costs memory only as the bytes come: a
// reader that sees 1 GiB announced and 10 bytes sent allocates about a
// read chunk, not 1 GiB.
func TestReadFrameGrowsWithTheBytes(t *testing.T) {
	input := append(binary.BigEndian.AppendUint32(nil, MaxFrameSize), `{"a":1}xyz`...)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, _, err := readFrame(bytes.NewReader(input))
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "end of stream inside a frame") {
		t.Fatalf("readFrame = %v, want end of stream inside a frame", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4*readChunk {
		t.Errorf("reading a cut 1 GiB frame allocated %d bytes; want at most %d", grew, 4*readChunk)
	}
}

// A body that outgrows the first read chunk ends exactly at its length:
// the frame after it is intact (growing by append once read into it).
func TestLargeFramesBackToBack(t *testing.T) {
	var buf bytes.Buffer
	sizes := []int{readChunk + 1, 3*readChunk + 5, 19}
	for i, n := range sizes {
		payload := append([]byte(`"`), bytes.Repeat([]byte{byte('a' + i)}, n-2)...)
		payload = append(payload, '"')
		if i == 1 {
			if err := writeBlob(&buf, payload); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := writeFrame(&buf, payload); err != nil {
			t.Fatal(err)
		}
	}
	r := bufio.NewReaderSize(&buf, 64<<10)
	for i, n := range sizes {
		got, blob, err := readFrame(r)
		if err != nil || len(got) != n || blob != (i == 1) || got[1] != byte('a'+i) || got[n-1] != '"' {
			t.Fatalf("frame %d: %d bytes, blob %v, %v; want %d bytes", i, len(got), blob, err, n)
		}
	}
	if _, _, err := readFrame(r); err != io.EOF {
		t.Errorf("after the frames: %v, want io.EOF", err)
	}
}

// BenchmarkReadBlob reads 8 MB blobs (a million int64s) as they come
// from a pool: the growth of the body buffer as the bytes arrive.
func BenchmarkReadBlob(b *testing.B) {
	var frame bytes.Buffer
	if err := writeBlob(&frame, make([]byte, 8<<20)); err != nil {
		b.Fatal(err)
	}
	data := frame.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		r := bufio.NewReaderSize(bytes.NewReader(data), 64<<10)
		if body, blob, err := readFrame(r); err != nil || !blob || len(body) != 8<<20 {
			b.Fatalf("readFrame: %d bytes, blob %v, %v", len(body), blob, err)
		}
	}
}

// A large body gets one buffer of its length once its first chunk has
// come, never a buffer grown by copying: what reading it
// allocates is the body and the first chunk, nothing more.
func TestReadFrameSizesTheBodyOnce(t *testing.T) {
	const n = 5*readChunk + 17
	var buf bytes.Buffer
	if err := writeBlob(&buf, bytes.Repeat([]byte{7}, n)); err != nil {
		t.Fatal(err)
	}
	r := bytes.NewReader(buf.Bytes())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, blob, err := readFrame(r)
	runtime.ReadMemStats(&after)
	if err != nil || !blob || len(got) != n || got[n-1] != 7 {
		t.Fatalf("readFrame = %d bytes, blob %v, %v; want a blob of %d", len(got), blob, err, n)
	}
	if grew, most := after.TotalAlloc-before.TotalAlloc, uint64(n+readChunk+64<<10); grew > most {
		t.Errorf("reading a %d-byte frame allocated %d bytes; want at most %d (the body and its first chunk)", n, grew, most)
	}
}

// Free pages are given back only before a large body larger than any
// before it: a body no larger finds pages of its size to reuse.
func TestNewLargest(t *testing.T) {
	m := memmark.Mark{Min: bodyMark.Min} // readFrame's threshold, on a mark of the test's own
	for _, tt := range []struct {
		size int
		want bool
	}{{largeFrame - 1, false}, {largeFrame, true}, {largeFrame, false}, {10 << 20, true}, {5 << 20, false}, {10 << 20, false}, {10<<20 + 1, true}} {
		if got := m.Raise(tt.size); got != tt.want {
			t.Errorf("Raise(%d) after %d: %v, want %v", tt.size, m.Largest.Load(), got, tt.want)
		}
	}
}
