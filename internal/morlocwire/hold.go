package morlocwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// blockHeaderSize is the header before each allocation in shared memory:
// magic u32, reference_count atomic u32, size u64 (v0.69 memory.h:90-97;
// v0.98 shm_types.rs:156-160, the same layout).
const blockHeaderSize = 16

// ErrFreed is Packet.Hold's error for a result whose block the pool had
// freed already: its bytes may be zeroes or another value.
var ErrFreed = errors.New("the pool freed the result's shared memory before it could be read")

// Hold takes a reference on the shared-memory block of an RPTR result, as
// morloc's own pools do with a value in shared memory they receive
// (v0.69 pymorloc.c:1247-1256 and pool.cpp:225-234: shincref, an atomic
// increment of the block's reference_count, shm.c:805-816). A Python or
// C++ pool frees a result's block when the worker that made it starts its
// next job (v0.69 pymorloc.c:37-52 flush_shm_tracker, called first thing
// in pool.py's run_job; pool.cpp:91-106, called by cpp_local_dispatch):
// with the reference held, its free only drops its own, and the block stays
// until release.
//
// release drops nexus's reference. When it is the last one (the pool let
// go meanwhile) it frees the block as morloc's shfree does (shm.c:782-799):
// the data zeroed, then the count set to 0, in that order, so that no
// pool's allocator, which takes any block whose count is 0
// (shm.c:497-531), hands it out while nexus is still writing. Nothing else
// is written and nothing is allocated: the count and, for a block nexus
// frees, its data, mapped read-write for the hold alone.
//
// A block whose count is already 0, or whose header is gone (free blocks
// are merged into the one before), was freed before Hold: the error wraps
// ErrFreed and the result must not be read. Packets whose value is not in
// shared memory need no hold: release does nothing.
func (p *Packet) Hold(mem *Memory) (release func(), err error) {
	nothing := func() {}
	h := p.Header
	if h.Type() != TypeData || h.Source() != SourceRptr || h.Format() != FormatVoidstar || len(p.Payload) < 8 || mem == nil {
		return nothing, nil // not a value in shared memory: decoding says what is wrong
	}
	done, err := mem.acquire()
	if err != nil {
		return nothing, err
	}
	defer done()
	r := binary.LittleEndian.Uint64(p.Payload)
	v, _, off, err := mem.locate(r)
	if err != nil {
		return nothing, fmt.Errorf("morloc result in shared memory: %w", err)
	}
	b, err := v.hold(off, mem.d.ShmHeaderSize)
	if err != nil {
		return nothing, fmt.Errorf("morloc result in shared memory at %d: %w", r, err)
	}
	return b.release, nil
}

// heldBlock is a block nexus holds a reference on.
type heldBlock struct {
	hdr   []byte         // the mapping of the header's page (or two)
	count *atomic.Uint32 // the header's reference_count, in hdr
	path  string         // the volume's file
	at    int64          // where the block's data starts in it
	size  int64          // the data's size
}

// hold takes a reference on the block whose data starts at off in the
// volume's data region (hs: the volume header's size).
func (v *volume) hold(off uint64, hs int) (*heldBlock, error) {
	if off < blockHeaderSize || off > uint64(len(v.data)) {
		return nil, fmt.Errorf("%w (no block header before offset %d)", ErrFreed, off)
	}
	hdr := v.data[off-blockHeaderSize : off]
	if binary.LittleEndian.Uint32(hdr) != blkMagic {
		return nil, fmt.Errorf("%w (no block header: magic %08x)", ErrFreed, binary.LittleEndian.Uint32(hdr))
	}
	size := binary.LittleEndian.Uint64(hdr[8:])
	if size > uint64(len(v.data))-off {
		return nil, fmt.Errorf("its block header says %d bytes, past the end of the volume", size)
	}
	at := int64(hs) + int64(off) // the data's place in the file
	rw, i, err := mapRW(v.path, at-blockHeaderSize, blockHeaderSize)
	if err != nil {
		return nil, fmt.Errorf("mapping its block header to hold the result: %w", err)
	}
	if i%4 != 0 { // mappings start on a page; blocks are 8-aligned (v0.69 memory.h:99-103)
		syscall.Munmap(rw)
		return nil, fmt.Errorf("its block header at byte %d of the volume is not aligned", at-blockHeaderSize)
	}
	b := &heldBlock{hdr: rw, count: (*atomic.Uint32)(unsafe.Pointer(&rw[i+4])), path: v.path, at: at, size: int64(size)}
	// An increment only while someone holds it: a count of 0 means the
	// pool has freed the block (and may have handed it out again, but then
	// the count is not 0 and the magic is back: nexus cannot tell, which
	// is why the driver sends a pool no call while one of its results may
	// be waiting to be held).
	for {
		c := b.count.Load()
		if c == 0 {
			syscall.Munmap(rw)
			return nil, fmt.Errorf("%w (its reference count is 0)", ErrFreed)
		}
		if b.count.CompareAndSwap(c, c+1) {
			return b, nil
		}
	}
}

// mapRW maps n bytes at off of the file read-write, from off's page on,
// and returns the mapping and where off is in it.
func mapRW(path string, off, n int64) ([]byte, int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	start := off &^ (int64(os.Getpagesize()) - 1)
	m, err := syscall.Mmap(int(f.Fd()), start, int(off+n-start), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, 0, err
	}
	return m, off - start, nil
}

// release drops the reference hold took, freeing the block if it was the
// last (see Packet.Hold).
func (b *heldBlock) release() {
	defer syscall.Munmap(b.hdr)
	for {
		c := b.count.Load()
		switch {
		case c == 0:
			return // freed under nexus's reference: not morloc's way; leave it
		case c > 1:
			if b.count.CompareAndSwap(c, c-1) {
				return
			}
		default: // nexus's is the last reference: no one else can take one
			if b.size > 0 {
				if data, i, err := mapRW(b.path, b.at, b.size); err == nil {
					clear(data[i:])
					syscall.Munmap(data)
				} // else the volume is gone: the program is ending
			}
			b.count.Store(0)
			return
		}
	}
}
