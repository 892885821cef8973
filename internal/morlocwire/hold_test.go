package morlocwire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// heldVolume writes a 0.69 volume (morloc's file-backed fallback) holding
// one block whose data is an af8 list of xs, with reference count count,
// and returns an RPTR packet pointing at it, the Memory, and the volume's
// path.
func heldVolume(t testing.TB, count uint32, xs ...float64) (*Packet, *Memory, string) {
	t.Helper()
	dir := t.TempDir()
	basename := "morloc-holdtest-" + filepath.Base(dir)
	// A free block first, so that the held one is not at the start.
	region := binary.LittleEndian.AppendUint32(nil, blkMagic)
	region = binary.LittleEndian.AppendUint32(region, 0)
	region = binary.LittleEndian.AppendUint64(region, 24)
	region = append(region, make([]byte, 24)...)
	value := binary.LittleEndian.AppendUint64(nil, uint64(len(xs)))
	at := uint64(len(region)) + blockHeaderSize // the value's relptr
	value = binary.LittleEndian.AppendUint64(value, at+16)
	for _, x := range xs {
		value = binary.LittleEndian.AppendUint64(value, uint64(int64(x)))
	}
	region = binary.LittleEndian.AppendUint32(region, blkMagic)
	region = binary.LittleEndian.AppendUint32(region, count)
	region = binary.LittleEndian.AppendUint64(region, uint64(len(value)))
	region = append(region, value...)
	path := writeVolume(t, dir, basename, 0, C, region)
	p := &Packet{Header: Header{Magic: Magic, Command: [8]byte{TypeData, SourceRptr, FormatVoidstar}, Length: 8},
		Payload: binary.LittleEndian.AppendUint64(nil, at)}
	m := OpenMemory(basename, dir, C)
	t.Cleanup(func() { m.Close() })
	return p, m, path
}

// blockOf reads the held block's reference count and data from the file.
func blockOf(t testing.TB, path string, p *Packet) (uint32, []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at := C.ShmHeaderSize + int(binary.LittleEndian.Uint64(p.Payload))
	hdr := b[at-blockHeaderSize : at]
	size := binary.LittleEndian.Uint64(hdr[8:])
	return binary.LittleEndian.Uint32(hdr[4:]), b[at : at+int(size)]
}

// setCount writes the block's reference count as a pool would.
func setCount(t *testing.T, path string, p *Packet, count uint32) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	at := int64(C.ShmHeaderSize) + int64(binary.LittleEndian.Uint64(p.Payload)) - blockHeaderSize + 4
	if _, err := f.WriteAt(binary.LittleEndian.AppendUint32(nil, count), at); err != nil {
		t.Fatal(err)
	}
}

// Hold takes a reference on a result's block while it is read, and gives
// it back; the value reads the same.
func TestHoldKeepsTheBlock(t *testing.T) {
	p, mem, path := heldVolume(t, 1, 3, 1, 4)
	_, before := blockOf(t, path, p)
	before = bytes.Clone(before)
	release, err := p.Hold(mem)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := blockOf(t, path, p); c != 2 {
		t.Errorf("reference count %d while held, want 2", c)
	}
	if got, err := p.Result(mustType(t, "ai8"), C, mem); err != nil || string(got) != "[3,1,4]" {
		t.Errorf("the held value: %s, %v", got, err)
	}
	release()
	c, data := blockOf(t, path, p)
	if c != 1 || !bytes.Equal(data, before) {
		t.Errorf("after release: count %d, data %x; want 1 and the value untouched", c, data)
	}
}

// A pool that lets go of the block while nexus holds it (its worker
// started its next job) leaves nexus the last reference: release frees
// the block as morloc's shfree does, the data zeroed and the count 0.
func TestHoldFreesWhenLast(t *testing.T) {
	p, mem, path := heldVolume(t, 1, 2, 7, 1, 8)
	release, err := p.Hold(mem)
	if err != nil {
		t.Fatal(err)
	}
	setCount(t, path, p, 1) // the pool's shfree: 2 → 1
	if got, err := p.Result(mustType(t, "ai8"), C, mem); err != nil || string(got) != "[2,7,1,8]" {
		t.Errorf("the held value: %s, %v", got, err)
	}
	release()
	c, data := blockOf(t, path, p)
	if c != 0 || !bytes.Equal(data, make([]byte, len(data))) {
		t.Errorf("after the last release: count %d, data %x; want 0 and zeroes", c, data)
	}
	// The free block before it is untouched.
	b, _ := os.ReadFile(path)
	if binary.LittleEndian.Uint32(b[C.ShmHeaderSize:]) != blkMagic {
		t.Error("the block before the held one lost its header")
	}
}

// A block freed before Hold (count 0), or merged into the one before it
// (its header gone), is refused: its bytes are no longer the result.
func TestHoldRefusesAFreedBlock(t *testing.T) {
	p, mem, path := heldVolume(t, 0, 5)
	if _, err := p.Hold(mem); !errors.Is(err, ErrFreed) {
		t.Errorf("count 0: %v, want ErrFreed", err)
	}
	if c, _ := blockOf(t, path, p); c != 0 {
		t.Errorf("count %d after a refused hold", c)
	}

	p, mem, path = heldVolume(t, 1, 5)
	b, _ := os.ReadFile(path)
	at := C.ShmHeaderSize + int(binary.LittleEndian.Uint64(p.Payload)) - blockHeaderSize
	clear(b[at : at+blockHeaderSize])
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Hold(mem); !errors.Is(err, ErrFreed) {
		t.Errorf("no header: %v, want ErrFreed", err)
	}
}

// An inline result needs no hold.
func TestHoldInline(t *testing.T) {
	p := &Packet{Header: Header{Magic: Magic, Command: [8]byte{TypeData, SourceMesg, FormatVoidstar}, Length: 4}, Payload: []byte{1, 0, 0, 0}}
	release, err := p.Hold(nil)
	if err != nil {
		t.Fatal(err)
	}
	release()
}

// BenchmarkHold is the cost of holding a result's block around its copy,
// here a 100 MB list (12.5 M Reals): a mapping of its pages, two atomic
// operations, an unmapping.
func BenchmarkHold(b *testing.B) {
	xs := make([]float64, 12_500_000)
	p, mem, _ := heldVolume(b, 1, xs...)
	b.ResetTimer()
	for b.Loop() {
		release, err := p.Hold(mem)
		if err != nil {
			b.Fatal(err)
		}
		release()
	}
}
