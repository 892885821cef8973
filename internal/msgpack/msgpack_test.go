package msgpack

import (
	"bytes"
	"math"
	"testing"
)

// smallestForms are each form's boundaries, with the bytes the
// MessagePack specification gives them (markers and big-endian lengths or
// values, written out by hand).
var smallestForms = []struct {
	name      string
	got, want []byte
}{
	{"nil", AppendNil(nil), []byte{0xc0}},
	{"true", AppendBool(nil, true), []byte{0xc3}},
	{"false", AppendBool(nil, false), []byte{0xc2}},
	{"uint 127", AppendUint(nil, 127), []byte{0x7f}},
	{"uint 128", AppendUint(nil, 128), []byte{0xcc, 0x80}},
	{"uint 256", AppendUint(nil, 256), []byte{0xcd, 0x01, 0x00}},
	{"uint 65536", AppendUint(nil, 65536), []byte{0xce, 0x00, 0x01, 0x00, 0x00}},
	{"uint 2^32", AppendUint(nil, 1<<32), []byte{0xcf, 0, 0, 0, 1, 0, 0, 0, 0}},
	{"int 5 as unsigned", AppendInt(nil, 5), []byte{0x05}},
	{"int 200 as unsigned", AppendInt(nil, 200), []byte{0xcc, 0xc8}},
	{"int -32", AppendInt(nil, -32), []byte{0xe0}},
	{"int -33", AppendInt(nil, -33), []byte{0xd0, 0xdf}},
	{"int -129", AppendInt(nil, -129), []byte{0xd1, 0xff, 0x7f}},
	{"int -32769", AppendInt(nil, -32769), []byte{0xd2, 0xff, 0xff, 0x7f, 0xff}},
	{"int min", AppendInt(nil, math.MinInt64), []byte{0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0}},
	{"float64 1.5", AppendFloat64(nil, 1.5), []byte{0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0}},
	{"float32 1.5", AppendFloat32(nil, 1.5), []byte{0xca, 0x3f, 0xc0, 0, 0}},
	{"str 31", AppendStrHeader(nil, 31), []byte{0xbf}},
	{"str 32", AppendStrHeader(nil, 32), []byte{0xd9, 0x20}},
	{"str 256", AppendStrHeader(nil, 256), []byte{0xda, 0x01, 0x00}},
	{"str 65536", AppendStrHeader(nil, 65536), []byte{0xdb, 0x00, 0x01, 0x00, 0x00}},
	{"bin 0", AppendBinHeader(nil, 0), []byte{0xc4, 0x00}},
	{"bin 256", AppendBinHeader(nil, 256), []byte{0xc5, 0x01, 0x00}},
	{"bin 65536", AppendBinHeader(nil, 65536), []byte{0xc6, 0x00, 0x01, 0x00, 0x00}},
	{"array 15", AppendArrayHeader(nil, 15), []byte{0x9f}},
	{"array 16", AppendArrayHeader(nil, 16), []byte{0xdc, 0x00, 0x10}},
	{"array 65536", AppendArrayHeader(nil, 65536), []byte{0xdd, 0x00, 0x01, 0x00, 0x00}},
}

func TestSmallestForms(t *testing.T) {
	for _, c := range smallestForms {
		if !bytes.Equal(c.got, c.want) {
			t.Errorf("%s: % x, want % x", c.name, c.got, c.want)
		}
	}
	// Appending keeps what was there.
	if got := AppendStrHeader([]byte("ab"), 3); string(got) != "ab\xa3" {
		t.Errorf("append to a prefix: %q", got)
	}
}
