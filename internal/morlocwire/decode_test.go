package morlocwire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// TestLayoutRustCrossCheck: the widths and offsets Rust's own test asserts
// (morloc-runtime-types/src/schema.rs:1108-1146, test_schema_compat_with_c).
func TestLayoutRustCrossCheck(t *testing.T) {
	for _, tt := range []struct {
		schema string
		width  int
		offs   []int
	}{
		{"s", 16, nil},
		{"ai4", 16, nil},
		{"t2i4s", 24, []int{0, 8}},
		{"?i4", 8, nil},
		{"?s", 8, nil},
	} {
		n, err := layout(mustType(t, tt.schema), Rust)
		if err != nil {
			t.Fatal(err)
		}
		if n.width != tt.width || !slices.Equal(n.offs, tt.offs) {
			t.Errorf("%s: width %d offsets %v, want %d %v", tt.schema, n.width, n.offs, tt.width, tt.offs)
		}
	}
}

// TestLayoutDialects: where the two runtimes lay the same schema out
// differently (reference §4.1, §7).
func TestLayoutDialects(t *testing.T) {
	for _, tt := range []struct {
		schema            string
		cWidth, rustWidth int
		cOffs, rustOffs   []int
		cAlign, rustAlign int
	}{
		// nil: 1 byte in C (schema.c:318-320), 0 in Rust (schema.rs:103)
		{"t3zbz", 3, 1, []int{0, 1, 2}, []int{0, 0, 1}, 1, 1},
		// a nested record: its fields' alignment in C (schema.c:276-284), 8 in Rust (schema.rs:177-186)
		{"t2bm11xb", 2, 16, []int{0, 1}, []int{0, 8}, 1, 8},
		{"m21ab1rm11yi2", 4, 16, []int{0, 2}, []int{0, 8}, 2, 8},
		// an optional: a tag then the value in C (schema.c:428-441), a relptr slot in Rust
		{"?i4", 8, 8, []int{4}, nil, 4, 8},
		{"?b", 2, 8, []int{1}, nil, 1, 8},
		{"?s", 24, 8, []int{8}, nil, 8, 8},
		{"t2?bi2", 4, 16, []int{0, 2}, []int{0, 8}, 2, 8},
		// the same in both
		{"m44names3agei46heightf84nick?s", 56, 40, []int{0, 16, 24, 32}, []int{0, 16, 24, 32}, 8, 8},
		{"t4i4sf8b", 40, 40, []int{0, 8, 24, 32}, []int{0, 8, 24, 32}, 8, 8},
	} {
		c, err := layout(mustType(t, tt.schema), C)
		if err != nil {
			t.Fatal(err)
		}
		r, err := layout(mustType(t, tt.schema), Rust)
		if err != nil {
			t.Fatal(err)
		}
		if c.width != tt.cWidth || !slices.Equal(c.offs, tt.cOffs) || c.align != tt.cAlign {
			t.Errorf("%s in 0.69: width %d offsets %v align %d, want %d %v %d", tt.schema, c.width, c.offs, c.align, tt.cWidth, tt.cOffs, tt.cAlign)
		}
		if r.width != tt.rustWidth || !slices.Equal(r.offs, tt.rustOffs) || r.align != tt.rustAlign {
			t.Errorf("%s in 0.98: width %d offsets %v align %d, want %d %v %d", tt.schema, r.width, r.offs, r.align, tt.rustWidth, tt.rustOffs, tt.rustAlign)
		}
	}
	// Recursive types exist in 0.98 only, j too.
	for _, s := range []string{"&1Am11xa^1A", "j"} {
		if _, err := layout(mustType(t, s), C); err == nil {
			t.Errorf("%s laid out in 0.69", s)
		}
	}
	n, err := layout(mustType(t, "&4Treem25valuej8childrena^4Tree"), Rust)
	if err != nil || n.width != 32 || n.items[1].elem.width != 32 {
		t.Errorf("Tree: %v, width %d", err, n.width)
	}
}

func TestWireSchema(t *testing.T) {
	for in, want := range map[string]string{
		"<dict>m44name<str>s3age<int>i46height<float>f84nick<str>?<str>s": "m44names3agei46heightf84nick?s",
		"<std::vector<$1>>a<std::vector<$1>>a<int>i4":                     "aai4",
		"<tuple>t2<bool>b<list>a<float>f8":                                "t2baf8",
		"a:3j":                                                            "a:3j",
		"&4Treem25valuej8childrena^4Tree":                                 "&4Treem25valuej8childrena^4Tree",
		"T:11as":                                                          "T:11as",
	} {
		if got := WireSchema(mustType(t, in)); got != want {
			t.Errorf("WireSchema(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestDialectOf(t *testing.T) {
	for v, want := range map[string]string{
		"0.69.0": "0.69.0", "v0.69.1": "0.69.0",
		"0.98.2": "0.98.2", "0.88.0": "0.88.0", "0.99.0-rc.1": "0.99.0-rc.1",
	} {
		d, err := DialectOf(v)
		if err != nil || d.Version != want {
			t.Errorf("DialectOf(%s) = %+v, %v", v, d, err)
		}
	}
	if d, _ := DialectOf("0.69.0"); d.OptionalSlot || d.ShmHeaderSize != 216 {
		t.Errorf("0.69: %+v", d)
	}
	if d, _ := DialectOf("0.98.2"); !d.OptionalSlot || !d.BigInt || d.ShmHeaderSize != 168 || !d.VolumeRelptr {
		t.Errorf("0.98: %+v", d)
	}
	for v, want := range map[string]string{
		"0.77.0": "between the C runtime of 0.69 and the layouts of 0.88",
		"0.60.0": "older than 0.69",
		"1.0.0":  "not known",
		"banana": "expected MAJOR.MINOR.PATCH",
	} {
		if _, err := DialectOf(v); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DialectOf(%s): %v, want %q", v, err, want)
		}
	}
}

func TestPackets(t *testing.T) {
	ping := Ping()
	if hexs(ping) != "6df80707"+strings.Repeat("00", 8)+"02"+strings.Repeat("00", 19) {
		t.Errorf("ping %x", ping)
	}
	if !IsPing(ping) || IsPing(CallPacket(1, nil)) || IsPing(ping[:31]) {
		t.Error("IsPing")
	}
	call := CallPacket(0x01020304, []byte{9, 9})
	h, err := ParseHeader(call)
	if err != nil || h.Type() != TypeCall || h.Midx() != 0x01020304 || h.Entrypoint() != 0 || h.Length != 2 || h.Offset != 0 || !bytes.HasSuffix(call, []byte{9, 9}) {
		t.Errorf("call %x %+v %v", call, h, err)
	}
	// midx at bytes 16..19 (v0.69 packet.h:34-39)
	if binary.LittleEndian.Uint32(call[16:]) != 0x01020304 {
		t.Errorf("midx at %x", call[12:20])
	}

	// ReadPacket: whole packets, EOF, truncation, size limits, bad magic.
	data := append(Ping()[:12:12], 0, 0, 4, 0, 0, 0, 0, 0)
	data = binary.LittleEndian.AppendUint32(data, 8)
	data = binary.LittleEndian.AppendUint64(data, 3)
	data = append(data, "mmh\x01\x00\x00\x00\x00"...)
	data = append(data, 1, 2, 3)
	p, err := ReadPacket(bytes.NewReader(data), 100)
	if err != nil || len(p.Meta) != 8 || !bytes.Equal(p.Payload, []byte{1, 2, 3}) {
		t.Fatalf("%+v %v", p, err)
	}
	if _, err := ReadPacket(bytes.NewReader(nil), 100); err != io.EOF {
		t.Errorf("empty: %v, want io.EOF", err)
	}
	if _, err := ReadPacket(bytes.NewReader(data[:10]), 100); err == nil || !strings.Contains(err.Error(), "inside the header") {
		t.Errorf("truncated header: %v", err)
	}
	if _, err := ReadPacket(bytes.NewReader(data[:40]), 100); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated body: %v", err)
	}
	if _, err := ReadPacket(bytes.NewReader(data), 10); err == nil || !strings.Contains(err.Error(), "more than the 10 allowed") {
		t.Errorf("limit: %v", err)
	}
	bad := bytes.Clone(data)
	bad[0] = 0
	if _, err := ReadPacket(bytes.NewReader(bad), 100); err == nil || !strings.Contains(err.Error(), "not a morloc packet") {
		t.Errorf("magic: %v", err)
	}
	huge := bytes.Clone(data)
	binary.LittleEndian.PutUint64(huge[24:], 1<<63)
	if _, err := ReadPacket(bytes.NewReader(huge), 1<<40); err == nil {
		t.Error("a 2^63-byte packet was accepted")
	}
}

// TestMetaBlocks: blocks of every type are walked, unknown ones kept, and
// padding or a block running past the area ends the walk.
func TestMetaBlocks(t *testing.T) {
	meta := []byte("mmh\x03\x02\x00\x00\x00\x05\x00" + "mmh\x01\x03\x00\x00\x00as\x00" + "mmh\x09\x00\x00\x00\x00" + "\x00\x00\x00")
	p := &Packet{Meta: meta}
	bs := p.MetaBlocks()
	if len(bs) != 3 || bs[0].Type != MetaVolIndex || bs[2].Type != 9 {
		t.Fatalf("%+v", bs)
	}
	if s, ok := p.Schema(); !ok || s != "as" {
		t.Errorf("schema %q %v", s, ok)
	}
	if p.volIndex() != 5 {
		t.Errorf("vol index %d", p.volIndex())
	}
	p.Meta = []byte("mmh\x01\xff\x00\x00\x00ab")
	if len(p.MetaBlocks()) != 0 {
		t.Error("a block past the area was read")
	}
}

// inlinePacket builds a MESG+VOIDSTAR result packet around payload.
func inlinePacket(schema string, payload []byte) *Packet {
	var meta []byte
	if schema != "" {
		meta = append([]byte("mmh\x01"), binary.LittleEndian.AppendUint32(nil, uint32(len(schema)+1))...)
		meta = append(append(meta, schema...), 0)
		for len(meta)%32 != 0 {
			meta = append(meta, 0)
		}
	}
	h := Header{Magic: Magic, Command: [8]byte{TypeData, SourceMesg, FormatVoidstar}, Offset: uint32(len(meta)), Length: uint64(len(payload))}
	return &Packet{Header: h, Meta: meta, Payload: payload}
}

// TestResultFaults: packets that are not results, or whose values point
// outside themselves, give errors and never panic.
func TestResultFaults(t *testing.T) {
	le := binary.LittleEndian
	str := func(size, rel uint64) []byte { return le.AppendUint64(le.AppendUint64(nil, size), rel) }
	tests := []struct {
		name, schema string
		p            *Packet
		d            Dialect
		want         string
	}{
		{"relptr past the payload", "s", inlinePacket("", str(2, 100)), C, "points outside the 16-byte payload"},
		{"size past the payload", "s", inlinePacket("", append(str(5, 16), "abc"...)), C, "points outside"},
		{"huge list", "af8", inlinePacket("", str(1<<58, 16)), C, "points outside"},
		{"list overflowing", "af8", inlinePacket("", str(1<<61+1, 16)), C, "does not fit in memory"},
		{"zero-width flood", "az", inlinePacket("", str(1<<40, 16)), Rust, "empty values"},
		{"short payload", "t2i8i8", inlinePacket("", make([]byte, 8)), C, "8-byte payload, the value takes 16"},
		{"wrong schema", "i4", inlinePacket("s", make([]byte, 4)), C, `the pool says its schema is "s", the manifest says "i4"`},
		{"sentinel optional", "?i4", inlinePacket("", le.AppendUint64(nil, 1<<63|5)), Rust, "reserved relative pointer"},
		{"fixed length", "a:2i4", inlinePacket("", str(3, 16)), Rust, "list of 3 items where its type says exactly 2"},
		{"big j", "j", inlinePacket("", str(1<<40, 16)), Rust, "more than"},
		{"compressed", "i4", &Packet{Header: Header{Command: [8]byte{TypeData, SourceMesg, FormatVoidstar, 1}}}, Rust, "compressed results are not supported"},
		{"not data", "i4", &Packet{Header: Header{Command: [8]byte{TypePing}}}, C, "not data"},
		{"json", "i4", &Packet{Header: Header{Command: [8]byte{TypeData, SourceMesg, FormatJSON}}}, C, "MESG+JSON results are not supported"},
		{"arrow", "i4", &Packet{Header: Header{Command: [8]byte{TypeData, SourceRptr, FormatArrow}}}, C, "RPTR+ARROW"},
		{"rptr without memory", "i4", &Packet{Header: Header{Command: [8]byte{TypeData, SourceRptr, FormatVoidstar}}, Payload: make([]byte, 8)}, C, "no shared memory was opened"},
		{"rptr short", "i4", &Packet{Header: Header{Command: [8]byte{TypeData, SourceRptr, FormatVoidstar}}, Payload: make([]byte, 4)}, C, "want an 8-byte relative pointer"},
		{"missing file", "i4", &Packet{Header: Header{Command: [8]byte{TypeData, SourceFile, FormatMsgpack}}, Payload: []byte("/nonexistent/morloc-pkt-0-0.mpk")}, Rust, "no such file"},
		{"msgpack wrong type", "i4", &Packet{Header: Header{Command: [8]byte{TypeData, SourceMesg, FormatMsgpack}}, Payload: []byte{0xa1, 'x'}}, C, "where an integer belongs"},
		{"msgpack out of range", "u1", &Packet{Header: Header{Command: [8]byte{TypeData, SourceMesg, FormatMsgpack}}, Payload: []byte{0xcd, 1, 0}}, C, "256 does not fit u1"},
		{"msgpack trailing", "i4", &Packet{Header: Header{Command: [8]byte{TypeData, SourceMesg, FormatMsgpack}}, Payload: []byte{1, 2}}, C, "1 bytes after"},
		{"msgpack huge array", "ai4", &Packet{Header: Header{Command: [8]byte{TypeData, SourceMesg, FormatMsgpack}}, Payload: []byte{0xdd, 0xff, 0xff, 0xff, 0xff}}, C, "items in 0 bytes"},
		{"msgpack tuple arity", "t2i4i4", &Packet{Header: Header{Command: [8]byte{TypeData, SourceMesg, FormatMsgpack}}, Payload: []byte{0x91, 1}}, C, "array of 1 items where a tuple of 2 belongs"},
	}
	for _, tt := range tests {
		_, err := tt.p.Result(mustType(t, tt.schema), tt.d, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	// Cycles: a record {x: [L]} whose list's data is the record itself,
	// once (as deep as allowed) and twice (doubling at each level, until
	// the output bound).
	tree := mustType(t, "&1Lm11xa^1L")
	once := le.AppendUint64(le.AppendUint64(nil, 1), 0)
	if _, err := inlinePacket("", once).Result(tree, Rust, nil); err == nil || !strings.Contains(err.Error(), "deeper than") {
		t.Errorf("a value holding itself: %v", err)
	}
	// A shared value: 40 levels of two records, both pointing at the
	// next level's two (2^40 records from 1.3 KB).
	var dag []byte
	for k := 0; k < 40; k++ {
		for range 2 {
			dag = le.AppendUint64(le.AppendUint64(dag, 2), uint64(32*(k+1)))
		}
	}
	dag = append(dag, make([]byte, 32)...)
	if _, err := inlinePacket("", dag).Result(tree, Rust, nil); !errors.Is(err, errExpands) {
		t.Errorf("a value sharing its parts: %v", err)
	}
	// Zero-width items are repeated, within their allowance.
	got, err := inlinePacket("", str(3, 16)).Result(mustType(t, "at2zz"), Rust, nil)
	if err != nil || string(got) != "[[null,null],[null,null],[null,null]]" {
		t.Errorf("zero-width items: %s %v", got, err)
	}
	// A failure is a *Failure.
	fail := &Packet{Header: Header{Command: [8]byte{TypeData, SourceMesg, FormatText, 0, 0, StatusFail}}, Payload: []byte("it broke")}
	var f *Failure
	if _, err := fail.Result(mustType(t, "i4"), C, nil); !errors.As(err, &f) || f.Message != "it broke" {
		t.Errorf("failure: %v", err)
	}
}

// TestMemoryVolumeIndexed resolves the (volume, offset) pairs of Rust's
// own test (shm_types.rs:183-219) that fit small volumes, in volumes
// written as morloc's file-backed fallback, and the flat 0.69 walk.
func TestMemoryVolumeIndexed(t *testing.T) {
	dir := t.TempDir()
	basename := "morloc-memtest-" + filepath.Base(dir)
	write := func(i int, d Dialect, data []byte) { writeVolume(t, dir, basename, i, d, data) }
	vol := func(size int, fill byte) []byte { return bytes.Repeat([]byte{fill}, size) }
	write(0, Rust, vol(0x10000, 0xa0))
	write(1, Rust, vol(0x2000, 0xa1))
	m := OpenMemory(basename, dir, Rust)
	defer m.Close()
	for _, tt := range []struct {
		r    uint64
		fill byte
	}{{0, 0xa0}, {1, 0xa0}, {16, 0xa0}, {1024, 0xa0}, {0xFFFF, 0xa0}, {1<<48 | 0, 0xa1}, {1<<48 | 0x1234, 0xa1}} {
		b, err := m.bytes(tt.r, 1)
		if err != nil || b[0] != tt.fill {
			t.Errorf("relptr %#x: %x, %v", tt.r, b, err)
		}
	}
	for r, want := range map[uint64]string{
		1<<48 | 0x2000:  "run past the end of volume 1",
		2 << 48:         "volume 2",
		1<<63 | 5:       "sentinel",
		42<<48 | 0xabcd: "volume 42",
	} {
		if _, err := m.bytes(r, 1); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("relptr %#x: %v, want %q", r, err, want)
		}
	}
	// A volume that appears later is mapped when reached.
	write(2, Rust, vol(64, 0xa2))
	if b, err := m.bytes(2<<48|3, 1); err != nil || b[0] != 0xa2 {
		t.Errorf("new volume: %x %v", b, err)
	}

	// 0.69: one flat offset over the volumes' data regions in order
	// (v0.69 shm.c:46-64), 216-byte headers.
	basename = basename + "-c"
	write(0, C, vol(100, 0xc0))
	write(1, C, vol(50, 0xc1))
	mc := OpenMemory(basename, dir, C)
	defer mc.Close()
	for r, fill := range map[uint64]byte{0: 0xc0, 99: 0xc0, 100: 0xc1, 149: 0xc1} {
		if b, err := mc.bytes(r, 1); err != nil || b[0] != fill {
			t.Errorf("flat relptr %d: %x %v", r, b, err)
		}
	}
	if _, err := mc.bytes(98, 4); err == nil {
		t.Error("a value spanning two volumes was read")
	}
	if _, err := mc.bytes(150, 1); err == nil || !strings.Contains(err.Error(), "volume 2") {
		t.Errorf("past the last volume: %v", err)
	}
	// A volume whose header is not written yet is not mapped for good.
	os.WriteFile(filepath.Join(dir, VolumeName(basename, 2)), make([]byte, 300), 0o600)
	if _, err := mc.bytes(150, 1); err == nil || !strings.Contains(err.Error(), "not initialized yet") {
		t.Errorf("uninitialized volume: %v", err)
	}
	write(2, C, vol(10, 0xc2))
	if b, err := mc.bytes(150, 1); err != nil || b[0] != 0xc2 {
		t.Errorf("volume initialized since: %x %v", b, err)
	}
	if err := mc.Close(); err != nil {
		t.Error(err)
	}
	if _, err := mc.acquire(); err == nil {
		t.Error("a closed Memory was used")
	}
}

func TestShmFiles(t *testing.T) {
	basename := "morloc-shmfiles-test-" + filepath.Base(t.TempDir())
	var made []string
	for _, name := range []string{basename + "_0", basename + "_12", basename + ".registry", basename + "_x", basename + "x_1"} {
		p := filepath.Join(ShmDir, name)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Skipf("no %s: %v", ShmDir, err)
		}
		made = append(made, p)
	}
	defer func() {
		for _, p := range made {
			os.Remove(p)
		}
	}()
	got, err := ShmFiles(basename)
	if err != nil || len(got) != 3 {
		t.Fatalf("%v %v", got, err)
	}
	for _, g := range got {
		if strings.HasSuffix(g, "_x") || strings.Contains(g, "x_1") {
			t.Errorf("%s listed", g)
		}
	}
	if _, err := ShmFiles("a/b"); err == nil {
		t.Error("a basename with a slash")
	}
}

var _ = manifest.Int

// TestMemoryConcurrent: calls decode through one Memory at once, mapping
// its volumes as they go (run with -race).
func TestMemoryConcurrent(t *testing.T) {
	dir := filepath.Join("testdata", "v0.69", "py")
	raw, err := os.ReadFile(filepath.Join(dir, "big_people.packet"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(dir, "big_people.want.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParsePacket(raw)
	if err != nil {
		t.Fatal(err)
	}
	vols, basename := unpackVolumes(t, filepath.Join(dir, "big_people.shm"))
	mem := OpenMemory(basename, vols, C)
	ty := mustType(t, "<list>a<dict>m44name<str>s3age<int>i46height<float>f84nick<str>?<str>s")
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			got, err := p.Result(ty, C, mem)
			if err == nil && !sameJSON(got, bytes.TrimSpace(want)) {
				err = errors.New("wrong value")
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if err := mem.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Result(ty, C, mem); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("after Close: %v", err)
	}
}
