package morlocwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// ShmDir is where POSIX shared memory objects live on Linux: shm_open(name)
// is the file ShmDir/name.
const ShmDir = "/dev/shm"

// Magic numbers of shared memory (v0.69 memory.h:36-37; v0.98 shm_types.rs:16-17).
const (
	shmMagic = 0xFECA0DF0 // a volume header
	blkMagic = 0x0CB10DF0 // a block header, 16 bytes before each allocation
)

// Memory reads a program's shared-memory volumes, read-only:
// ShmDir/<basename>_<i>, or the file <fallbackDir>/<basename>_<i> that
// morloc uses when /dev/shm is too small (v0.69 shm.c:160-245, 307-363;
// v0.98 shm.rs:580-780). Volumes are mapped as relative pointers reach
// them, since pools create new ones as they fill the old. Nothing is
// allocated in them, and morloc's allocator state (the cursor, the lock in
// each header) belongs to the pools; the one write is Packet.Hold's, to
// the reference count of a result's block (hold.go).
//
// Decoding copies a value out at once (Packet.Result, Packet.Value). A
// pool frees a result's block when that worker starts its next job
// (reference §3), so a caller holds the block (Packet.Hold) and decodes a
// result before the pool can be given another call it might run on the
// same worker.
type Memory struct {
	basename, fallback string
	d                  Dialect
	mu                 sync.Mutex                // mapping a volume
	vols               atomic.Pointer[[]*volume] // by index; nil where not mapped yet
	use                sync.RWMutex              // held for reading while a value is decoded
	closed             bool
	mapped             atomic.Int64 // bytes mapped
}

// volume is one mapped volume.
type volume struct {
	path    string
	mapping []byte // the whole file
	data    []byte // its data region, after the header
}

// OpenMemory returns a Memory for the volumes named basename (fallbackDir:
// the pools' tmpdir, where morloc puts them when /dev/shm is too small).
// It maps nothing until a relative pointer needs a volume.
func OpenMemory(basename, fallbackDir string, d Dialect) *Memory {
	m := &Memory{basename: basename, fallback: fallbackDir, d: d}
	m.vols.Store(&[]*volume{})
	return m
}

// Close unmaps every volume. It waits for decodes in progress; a Memory is
// not used after Close.
func (m *Memory) Close() error {
	m.use.Lock()
	defer m.use.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	var errs []error
	for _, v := range *m.vols.Load() {
		if v != nil {
			errs = append(errs, syscall.Munmap(v.mapping))
		}
	}
	m.vols.Store(&[]*volume{})
	return errors.Join(errs...)
}

// acquire holds the mappings for one decode.
func (m *Memory) acquire() (func(), error) {
	m.use.RLock()
	if m.closed {
		m.use.RUnlock()
		return nil, errors.New("shared memory is closed")
	}
	return m.use.RUnlock, nil
}

func (m *Memory) size() int { return int(m.mapped.Load()) }

// bytes resolves relative pointer r to the n bytes there (v0.69
// shm.c:46-64: a flat offset over the volumes' data regions in order;
// v0.98 shm.rs:1015-1060 and shm_types.rs:38-93: bit 63 a sentinel, bits
// 62..48 the volume, 47..0 the offset in it). A value never spans volumes.
func (m *Memory) bytes(r, n uint64) ([]byte, error) {
	v, idx, off, err := m.locate(r)
	if err != nil {
		return nil, err
	}
	return v.slice(idx, off, n)
}

// copyPiece is how much of a large value copyOut copies before it lets go
// of the pages it read.
const copyPiece = 1 << 20

// copyOut copies the n bytes at relative pointer r out of shared memory, a
// piece at a time, and lets go of each piece's pages once copied: madvise
// MADV_DONTNEED on this read-only shared mapping takes them out of nexus's
// page tables only (the volume keeps its contents for whoever reads it
// next), so a large result costs nexus its copy, not its copy and the
// mapped pages too, which stayed in its resident set until it exited.
func (m *Memory) copyOut(r, n uint64) ([]byte, error) {
	v, idx, off, err := m.locate(r)
	if err != nil {
		return nil, err
	}
	if _, err := v.slice(idx, off, n); err != nil {
		return nil, err
	}
	out := make([]byte, n)
	hs := uint64(len(v.mapping) - len(v.data)) // the data region's offset in the mapping
	page := uint64(os.Getpagesize())
	for k := uint64(0); k < n; k += copyPiece {
		end := min(n, k+copyPiece)
		copy(out[k:end], v.data[off+k:off+end])
		// Only the pages wholly inside the piece.
		lo := (hs + off + k + page - 1) / page * page
		hi := (hs + off + end) / page * page
		if hi > lo {
			dropPages(v.mapping[lo:hi])
		}
	}
	return out, nil
}

// locate finds the volume relative pointer r points into (see bytes), and
// the offset in its data region.
func (m *Memory) locate(r uint64) (*volume, int, uint64, error) {
	if m.d.VolumeRelptr {
		if r>>63 != 0 {
			return nil, 0, 0, fmt.Errorf("relative pointer %d is a sentinel, not an address", int64(r))
		}
		idx := int(r >> 48 & 0x7fff)
		v, err := m.volume(idx)
		if err != nil {
			return nil, 0, 0, err
		}
		return v, idx, r & (1<<48 - 1), nil
	}
	if int64(r) < 0 {
		return nil, 0, 0, fmt.Errorf("relative pointer %d is negative", int64(r))
	}
	off := r
	for idx := 0; idx < m.d.MaxVolumes; idx++ {
		v, err := m.volume(idx)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("relative pointer %d: %w", r, err)
		}
		if size := uint64(len(v.data)); off >= size {
			off -= size
			continue
		}
		return v, idx, off, nil
	}
	return nil, 0, 0, fmt.Errorf("relative pointer %d is beyond the %d volumes morloc %s has", r, m.d.MaxVolumes, m.d.Version)
}

func (v *volume) slice(idx int, off, n uint64) ([]byte, error) {
	size := uint64(len(v.data))
	if off > size || n > size-off {
		return nil, fmt.Errorf("%d bytes at offset %d run past the end of volume %d (%d bytes)", n, off, idx, size)
	}
	return v.data[off : off+n : off+n], nil
}

// volume returns volume idx, mapping it if this is the first time.
func (m *Memory) volume(idx int) (*volume, error) {
	if vs := *m.vols.Load(); idx < len(vs) && vs[idx] != nil {
		return vs[idx], nil
	}
	if idx >= m.d.MaxVolumes {
		return nil, fmt.Errorf("volume %d is beyond the %d volumes morloc %s has", idx, m.d.MaxVolumes, m.d.Version)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	vs := *m.vols.Load()
	if idx < len(vs) && vs[idx] != nil {
		return vs[idx], nil
	}
	v, err := m.open(idx)
	if err != nil {
		return nil, err
	}
	next := make([]*volume, max(len(vs), idx+1))
	copy(next, vs)
	next[idx] = v
	m.vols.Store(&next)
	m.mapped.Add(int64(len(v.mapping)))
	return v, nil
}

// VolumeName is the name of volume idx of basename (v0.69 shm.c:170).
func VolumeName(basename string, idx int) string { return basename + "_" + strconv.Itoa(idx) }

func (m *Memory) open(idx int) (*volume, error) {
	name := VolumeName(m.basename, idx)
	path := filepath.Join(ShmDir, name)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) && m.fallback != "" {
		path = filepath.Join(m.fallback, name)
		f, err = os.Open(path)
	}
	if err != nil {
		return nil, fmt.Errorf("shared memory volume %d: %w", idx, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("shared memory volume %s: %w", path, err)
	}
	hs := int64(m.d.ShmHeaderSize)
	if st.Size() < hs || st.Size() > 1<<46 {
		return nil, fmt.Errorf("shared memory volume %s: %d bytes, too small for its %d-byte header (not initialized yet?)", path, st.Size(), hs)
	}
	mapping, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("shared memory volume %s: mmap: %w", path, err)
	}
	// The header: magic u32 at 0, volume_size (data bytes) u64 at 136
	// (v0.69 memory.h:54-85; v0.98 shm_types.rs:144-153).
	magic := binary.LittleEndian.Uint32(mapping)
	size := binary.LittleEndian.Uint64(mapping[136:])
	if magic != shmMagic || size > uint64(st.Size()-hs) {
		syscall.Munmap(mapping)
		if magic != shmMagic {
			return nil, fmt.Errorf("shared memory volume %s: magic %08x, want %08x (not initialized yet?)", path, magic, uint32(shmMagic))
		}
		return nil, fmt.Errorf("shared memory volume %s: header says %d data bytes, the file holds %d after its header", path, size, st.Size()-hs)
	}
	return &volume{path: path, mapping: mapping, data: mapping[hs : hs+int64(size)]}, nil
}

// ShmFiles lists what a program's pools may have left in ShmDir under
// basename: its volumes <basename>_<i> and (0.98) <basename>.registry, to
// unlink when the program stops (v0.69 shm.c:364-406; v0.98
// process.rs:664-683).
func ShmFiles(basename string) ([]string, error) {
	if basename == "" || strings.ContainsRune(basename, '/') {
		return nil, fmt.Errorf("shared memory basename %q", basename)
	}
	entries, err := os.ReadDir(ShmDir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		rest, ok := strings.CutPrefix(name, basename)
		if !ok {
			continue
		}
		if rest == ".registry" || len(rest) > 1 && rest[0] == '_' && digits(rest[1:]) {
			out = append(out, filepath.Join(ShmDir, name))
		}
	}
	return out, nil
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}
