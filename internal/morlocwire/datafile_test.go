package morlocwire

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// DataPacketJSON reads every inline packet of the 0.98 fixtures (written
// byte by byte from morloc's source) as Result does.
func TestDataPacketJSONFixtures(t *testing.T) {
	paths, _ := filepath.Glob("testdata/v0.98/*.fix")
	n := 0
	for _, p := range paths {
		f := parseFixture(t, p)
		if f.packet == nil || f.want == "" || len(f.volumes) > 0 || f.hasFile {
			continue
		}
		h, err := ParseHeader(f.packet)
		if err != nil || h.Source() != SourceMesg {
			continue
		}
		typ, err := manifest.ParseType(f.schema)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DataPacketJSON(f.packet, typ, Rust)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if string(got) != f.want {
			t.Errorf("%s: %s, want %s", p, got, f.want)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no fixture read")
	}
}

func TestDataPacketJSONRefuses(t *testing.T) {
	ints, _ := manifest.ParseType("aj")
	strs, _ := manifest.ParseType("as")
	// A msgpack packet of [1,2] with its schema.
	pkt := appendHeader(nil, [8]byte{TypeData, SourceMesg, FormatMsgpack}, 32, 3)
	meta := schemaMeta("aj")
	pkt = append(pkt, meta...)
	pkt = append(pkt, 0x92, 0x01, 0x02)
	if got, err := DataPacketJSON(pkt, ints, Rust); err != nil || string(got) != "[1,2]" {
		t.Fatalf("msgpack packet: %s, %v", got, err)
	}
	cases := []struct {
		b    []byte
		t    *manifest.Type
		want string
	}{
		{pkt, strs, "schema mismatch: file has schema `aj`, requested `as`"},
		{pkt[:20], ints, "at least 32 bytes"},
		{func() []byte { c := append([]byte(nil), pkt...); c[15] = 1; return c }(), ints, "compressed"},
		{appendHeader(nil, [8]byte{TypeStream}, 0, 0), ints, "stream file"},
		{Ping(), ints, "expected a data packet"},
	}
	for _, c := range cases {
		if _, err := DataPacketJSON(c.b, c.t, Rust); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%x...: %v, want %q", c.b[:min(len(c.b), 16)], err, c.want)
		}
	}
	if got, err := MsgpackJSON([]byte{0x92, 0x01, 0x02}, ints, Rust); err != nil || string(got) != "[1,2]" {
		t.Errorf("MsgpackJSON: %s, %v", got, err)
	}
	if _, err := MsgpackJSON([]byte{0xa1, 'x'}, ints, Rust); err == nil {
		t.Error("MsgpackJSON read a string as [Int]")
	}
}
