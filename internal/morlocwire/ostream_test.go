package morlocwire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// streamParts splits a stream file into its header, data sub-packets and
// the footer the tail points at.
type streamParts struct {
	schema     string
	subpackets [][]byte
	footer     *Packet
	rest       []byte // bytes after the last sub-packet, footer and tail included
}

func readStream(t *testing.T, b []byte) streamParts {
	t.Helper()
	h, err := ParseHeader(b)
	if err != nil || h.Type() != TypeStream {
		t.Fatalf("not a stream header: %v (type %d)", err, h.Type())
	}
	if h.Length != ^uint64(0) {
		t.Errorf("stream header length %d, want the sentinel", h.Length)
	}
	hp := &Packet{Header: h, Meta: b[HeaderSize : HeaderSize+int(h.Offset)]}
	var out streamParts
	out.schema, _ = hp.Schema()
	pos := HeaderSize + int(h.Offset)
	for pos+HeaderSize <= len(b) {
		ph, err := ParseHeader(b[pos:])
		if err != nil || ph.Type() != TypeData {
			break
		}
		end := pos + HeaderSize + int(ph.Offset) + int(ph.Length)
		out.subpackets = append(out.subpackets, b[pos:end])
		pos = end
	}
	out.rest = b[pos:]
	if len(b) >= streamTailSize && bytes.Equal(b[len(b)-4:], streamTailMagic[:]) {
		// A footer's offset and length both count its blocks, which
		// follow the header once (packet.rs make_footer_packet).
		n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
		fb := b[len(b)-8-n : len(b)-8]
		fh, err := ParseHeader(fb)
		if err != nil || int(fh.Offset) != n-HeaderSize || fh.Length != uint64(fh.Offset) {
			t.Fatalf("footer header %+v (%v) for a %d-byte footer", fh, err, n)
		}
		out.footer = &Packet{Header: fh, Meta: fb[HeaderSize:]}
	}
	return out
}

func TestOStreamFile(t *testing.T) {
	cases := []struct {
		schema  string
		batches []string // written, a flush after each
		want    []string // each sub-packet read back
	}{
		{"aj", []string{`[10,20,30]`, `[40,50]`}, []string{`[10,20,30]`, `[40,50]`}},
		{"aj", []string{`[0,-1,170141183460469231731687303715884105727,-170141183460469231731687303715884105728]`},
			[]string{`[0,-1,170141183460469231731687303715884105727,-170141183460469231731687303715884105728]`}},
		{"as", []string{`["alpha","","gamma délta"]`}, []string{`["alpha","","gamma délta"]`}},
		{"ai4", []string{`[1,-2,3]`}, []string{`[1,-2,3]`}},
		{"af8", []string{`[1.5,-0.25]`}, []string{`[1.5,-0.25]`}},
		{"at2sj", []string{`[["a",1],["bb",2]]`, `[["ccc",3]]`}, []string{`[["a",1],["bb",2]]`, `[["ccc",3]]`}},
		{"am22xsas2ysaj", []string{`[{"xs":["p","q"],"ys":[1,2,3]},{"xs":[],"ys":[]}]`}, []string{`[{"xs":["p","q"],"ys":[1,2,3]},{"xs":[],"ys":[]}]`}},
		{"a?s", []string{`["x",null,"zz"]`}, []string{`["x",null,"zz"]`}},
		{"aas", []string{`[["a","b"],[],["c"]]`}, []string{`[["a","b"],[],["c"]]`}},
		{"ab", []string{`[true,false]`}, []string{`[true,false]`}},
	}
	for _, c := range cases {
		t.Run(c.schema, func(t *testing.T) {
			typ, err := manifest.ParseType(c.schema)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "out.stream")
			s, err := CreateStream(path, typ, Rust)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range c.batches {
				if err := s.Write(0, json.RawMessage(b)); err != nil {
					t.Fatal(err)
				}
				if err := s.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Flush(); err != nil { // nothing buffered: no sub-packet
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			parts := readStream(t, b)
			if parts.schema != c.schema {
				t.Errorf("schema %q, want %q", parts.schema, c.schema)
			}
			if len(parts.subpackets) != len(c.want) {
				t.Fatalf("%d sub-packets, want %d", len(parts.subpackets), len(c.want))
			}
			for i, sp := range parts.subpackets {
				got, err := DataPacketJSON(sp, typ, Rust)
				if err != nil {
					t.Fatalf("sub-packet %d: %v", i, err)
				}
				if string(got) != c.want[i] {
					t.Errorf("sub-packet %d = %s, want %s", i, got, c.want[i])
				}
			}
			f := parts.footer
			if f == nil || f.Header.Type() != TypeFooter {
				t.Fatalf("no final footer")
			}
			kinds := ""
			for _, m := range f.MetaBlocks() {
				kinds += string(rune('0' + m.Type))
				if m.Type == metaSubpacketIndex {
					if n := binary.LittleEndian.Uint64(m.Data); n != uint64(len(c.want)) {
						t.Errorf("index of %d sub-packets, want %d", n, len(c.want))
					}
				}
				if m.Type == metaFooterStatus && (len(m.Data) != 1 || m.Data[0] != footerClosed) {
					t.Errorf("status %v", m.Data)
				}
			}
			if kinds != "6578" {
				t.Errorf("footer blocks %q, want diag, index, final, status (6578)", kinds)
			}
			// The footer is all that follows the sub-packets: no stale temp footer.
			if len(parts.rest) != HeaderSize+len(f.Meta)+streamTailSize {
				t.Errorf("%d bytes after the sub-packets, want the final footer's %d", len(parts.rest), HeaderSize+len(f.Meta)+streamTailSize)
			}
		})
	}
}

// A flushed stream that is never closed ends in a temp footer (the
// StreamDiag alone), which a reader tells from a final one.
func TestOStreamTempFooter(t *testing.T) {
	typ, _ := manifest.ParseType("aj")
	path := filepath.Join(t.TempDir(), "temp.stream")
	s, err := CreateStream(path, typ, Rust)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(0, json.RawMessage(`[1,2,3]`)); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(0, json.RawMessage(`[4]`)); err != nil { // buffered, never flushed
		t.Fatal(err)
	}
	s.Abort()
	b, _ := os.ReadFile(path)
	parts := readStream(t, b)
	if len(parts.subpackets) != 1 || parts.footer == nil {
		t.Fatalf("%d sub-packets, footer %v", len(parts.subpackets), parts.footer)
	}
	blocks := parts.footer.MetaBlocks()
	if len(blocks) != 1 || blocks[0].Type != metaStreamDiag || len(blocks[0].Data) != streamDiagSize {
		t.Errorf("temp footer blocks %+v", blocks)
	}
	if len(parts.rest) != 32+8+160+8 {
		t.Errorf("temp footer of %d bytes, want STREAM_TEMP_FOOTER_BYTES (208)", len(parts.rest))
	}
	if got := binary.LittleEndian.Uint64(blocks[0].Data[32:]); got != 1 {
		t.Errorf("diag subpacket_count %d, want 1", got)
	}
}

// @append resumes after the last whole sub-packet; the final footer
// indexes the sub-packets of both writers.
func TestOStreamAppend(t *testing.T) {
	typ, _ := manifest.ParseType("aj")
	path := filepath.Join(t.TempDir(), "a.stream")
	s, _ := CreateStream(path, typ, Rust)
	s.Write(0, json.RawMessage(`[1,2,3]`))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := AppendStream(path, typ, Rust)
	if err != nil {
		t.Fatal(err)
	}
	a.Write(0, json.RawMessage(`[4,5]`))
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	parts := readStream(t, b)
	var got []string
	for _, sp := range parts.subpackets {
		v, err := DataPacketJSON(sp, typ, Rust)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(v))
	}
	if strings.Join(got, " ") != "[1,2,3] [4,5]" {
		t.Errorf("sub-packets %v", got)
	}
	other, _ := manifest.ParseType("as")
	if _, err := AppendStream(path, other, Rust); err == nil || !strings.Contains(err.Error(), "schema mismatch") {
		t.Errorf("append with another schema: %v", err)
	}
}

// A stdio stream (a pipe) has no temp footers: the header, the
// sub-packets, the final footer.
func TestOStreamStdio(t *testing.T) {
	typ, _ := manifest.ParseType("aj")
	var buf bytes.Buffer
	s, err := StdioStream(&buf, typ, Rust)
	if err != nil {
		t.Fatal(err)
	}
	s.Write(0, json.RawMessage(`[7]`))
	s.Flush()
	s.Write(0, json.RawMessage(`[8,9]`))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	parts := readStream(t, buf.Bytes())
	if len(parts.subpackets) != 2 || parts.footer == nil || len(parts.footer.MetaBlocks()) != 4 {
		t.Fatalf("stdio stream: %d sub-packets, footer %v", len(parts.subpackets), parts.footer)
	}
}

func TestOStreamRefuses(t *testing.T) {
	typ, _ := manifest.ParseType("aj")
	path := filepath.Join(t.TempDir(), "r.stream")
	s, _ := CreateStream(path, typ, Rust)
	for _, c := range []struct {
		level   int
		v, want string
	}{
		{1, `[1]`, "uncompressed"},
		{0, `["x"]`, "element 0"},
		{0, `{}`, "JSON array"},
	} {
		if err := s.Write(c.level, json.RawMessage(c.v)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Write(%d, %s) = %v, want %q", c.level, c.v, err, c.want)
		}
	}
	scalar, _ := manifest.ParseType("j")
	if _, err := CreateStream(path, scalar, Rust); err == nil {
		t.Error("a stream of a non-list type was created")
	}
	if _, err := CreateStream(path, typ, C); err == nil {
		t.Error("a stream file in the 0.69 dialect was created")
	}
	s.Close()
	if err := s.Write(0, json.RawMessage(`[1]`)); err == nil {
		t.Error("a write after close")
	}
}
