package morlocwire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A large list of numbers comes out of shared memory whole and unchanged,
// and its pages leave nexus's resident set once copied: the mapping of
// the volume holds (nearly) nothing resident after the copy.
func TestLargeResultLeavesSharedMemory(t *testing.T) {
	const n = 3<<20/8 + 5 // 3 MB of float64s and a bit: several pieces, a short last one
	dir := t.TempDir()
	basename := "morloc-copyout-" + filepath.Base(dir)
	region := binary.LittleEndian.AppendUint64(nil, n)
	region = binary.LittleEndian.AppendUint64(region, 16) // the data right after {size, data}
	for i := range n {
		region = binary.LittleEndian.AppendUint64(region, math.Float64bits(float64(i)*1.5))
	}
	path := writeVolume(t, dir, basename, 0, C, region)
	p := &Packet{Header: Header{Magic: Magic, Command: [8]byte{TypeData, SourceRptr, FormatVoidstar}, Length: 8}, Payload: make([]byte, 8)}
	mem := OpenMemory(basename, dir, C)
	defer mem.Close()
	v, err := p.Value(mustType(t, "af8"), C, mem)
	if err != nil || len(v.Arrays) != 1 {
		t.Fatalf("%+v %v", v, err)
	}
	if !bytes.Equal(v.Arrays[0].Data, region[16:]) {
		t.Fatal("the list came out changed")
	}
	if rss, ok := mappingRss(t, path); ok && rss > 64<<10 {
		t.Errorf("the volume's mapping holds %d bytes resident after the copy, want its pages let go of", rss)
	}
	// The volume itself is intact: read again, the same numbers.
	if again, err := p.Value(mustType(t, "af8"), C, mem); err != nil || !bytes.Equal(again.Arrays[0].Data, region[16:]) {
		t.Fatalf("read again: %v", err)
	}
}

// mappingRss is the resident size of this process's mapping of path
// (/proc/self/smaps); ok is false where there is no such file.
func mappingRss(t *testing.T, path string) (int, bool) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		l := sc.Text()
		if strings.Contains(l, "-") && strings.HasSuffix(l, path) {
			in = true
			continue
		}
		if in && strings.HasPrefix(l, "Rss:") {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(l, "Rss:"), "kB")))
			if err != nil {
				t.Fatalf("smaps: %q", l)
			}
			return kb << 10, true
		}
	}
	t.Fatalf("no mapping of %s in /proc/self/smaps", path)
	return 0, false
}

// writeVolume writes data as shared-memory volume i of basename in dir,
// behind the volume header d's runtime writes, and returns its path.
func writeVolume(t testing.TB, dir, basename string, i int, d Dialect, data []byte) string {
	t.Helper()
	h := make([]byte, d.ShmHeaderSize)
	binary.LittleEndian.PutUint32(h, shmMagic)
	binary.LittleEndian.PutUint64(h[136:], uint64(len(data)))
	path := filepath.Join(dir, VolumeName(basename, i))
	if err := os.WriteFile(path, append(h, data...), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
