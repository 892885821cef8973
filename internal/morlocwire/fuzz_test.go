package morlocwire

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// fuzzSchemas are the types the fuzz targets decode and encode with.
var fuzzSchemas = []string{
	"i4", "u8", "f4", "f8", "b", "z", "s", "j",
	"af8", "ai4", "au1", "aas", "az", "a:2i4",
	"t2?i4?s", "t3zbz", "t2jj", "?s", "a?m11xb",
	"m24names4nick?s", "m44names3agei46heightf84nick?s",
	"<dict>at2si4", "&4Treem25valuej8childrena^4Tree",
}

// memoryOver is a Memory whose volume 0 holds data, mapped from nowhere:
// the fuzz targets read shared memory from their input.
func memoryOver(d Dialect, data []byte) *Memory {
	m := OpenMemory("morloc-fuzz-no-such-volume", "", d)
	vols := []*volume{{data: data}}
	m.vols.Store(&vols)
	m.mapped.Store(int64(len(data)))
	return m
}

// FuzzResult: decoding arbitrary bytes as a result packet, inline or
// through shared memory, in either dialect, never panics (a read outside
// the payload or the volume would) and never runs on; what it returns is
// valid JSON.
func FuzzResult(f *testing.F) {
	for _, dir := range []string{"testdata/v0.69/py", "testdata/v0.69/cpp"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.packet"))
		for i, file := range files {
			if b, err := os.ReadFile(file); err == nil {
				f.Add(b, uint8(i), i%2 == 0)
			}
		}
	}
	for _, s := range []string{"j", "t2jj", "t2?i4?s", "m24names4nick?s", "t2t3zbzaz", "&4Treem25valuej8childrena^4Tree"} {
		f.Add(append(inlinePacketBytes(s), make([]byte, 64)...), uint8(0), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, which uint8, rust bool) {
		d := C
		if rust {
			d = Rust
		}
		p, err := ReadPacket(bytes.NewReader(data), 1<<20)
		if err != nil || p.Header.Source() == SourceFile {
			return // a FILE packet names a file: not the fuzzer's to choose
		}
		ty := mustType(t, fuzzSchemas[int(which)%len(fuzzSchemas)])
		mem := memoryOver(d, data)
		if out, err := p.Result(ty, d, mem); err == nil && !json.Valid(out) {
			t.Fatalf("invalid JSON %q", out)
		}
		if v, err := p.Value(ty, d, mem); err == nil && len(v.Arrays) == 0 && !json.Valid(v.JSON) {
			t.Fatalf("invalid JSON %q", v.JSON)
		}
	})
}

func inlinePacketBytes(schema string) []byte {
	p := inlinePacket(schema, nil)
	h := appendHeader(nil, p.Header.Command, p.Header.Offset, 64)
	return append(h, p.Meta...)
}

// FuzzArg: encoding arbitrary JSON never panics, and what it encodes
// decodes back by the same schema.
func FuzzArg(f *testing.F) {
	for _, s := range []string{`1`, `-2147483649`, `"a\u0000"`, `[1,2.5]`, `{"name":"x","nick":null}`, `[["a",1]]`, `{"a":1}`, `1e400`, `"NaN"`, `{"value":1,"children":[]}`} {
		f.Add(s, uint8(0), false)
	}
	f.Add(`{"name":"x","age":00,"height":1}`, uint8(slices.Index(fuzzSchemas, "m44names3agei46heightf84nick?s")), false) // not JSON: refused
	f.Fuzz(func(t *testing.T, value string, which uint8, rust bool) {
		d := C
		if rust {
			d = Rust
		}
		ty := mustType(t, fuzzSchemas[int(which)%len(fuzzSchemas)])
		pkt, err := AppendArg(nil, ty, json.RawMessage(value), d)
		if err != nil {
			return
		}
		if !json.Valid([]byte(value)) {
			t.Fatalf("%q as %s: not JSON, yet encoded to %x", value, ty, pkt)
		}
		p, err := ParsePacket(pkt)
		if err != nil {
			t.Fatal(err)
		}
		n, err := layout(ty, d)
		if err != nil {
			t.Fatal(err)
		}
		out, err := msgpackJSON(n, p.Payload)
		if err != nil || !json.Valid(out) {
			t.Fatalf("%s as %s encoded to %x, which reads back as %q, %v", value, ty, p.Payload, out, err)
		}
	})
}
