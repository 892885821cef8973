package morlocwire

import (
	"fmt"
	"strconv"
	"strings"
)

// Dialect is what differs on the wire between morloc versions
// (docs/spec.md §8.1, §8.5; the versions each serves: docs/morloc.md,
// "Versions").
// The packet header, the command codes, the data packet fields, the call
// layout and the msgpack encoding of arguments are the same in every
// dialect; the voidstar layout of results and the meaning of relative
// pointers are not.
type Dialect struct {
	// Version is the morloc version whose layouts these are ("0.69.0",
	// "0.98.2"): the one the layouts were read from.
	Version string
	// BigInt: the schema code j (arbitrary-precision Int) exists: 16 bytes
	// {size, value-or-relptr} in voidstar, a msgpack int or bin of
	// little-endian two's-complement u64 limbs on the wire.
	BigInt bool
	// OptionalSlot: an optional is an 8-byte relative pointer (-1 = absent)
	// to its value stored elsewhere; otherwise it is inline, a u8 tag then
	// the value at the value's alignment.
	OptionalSlot bool
	// NilWidth is the voidstar width of nil (z): 1 in C, 0 in Rust.
	NilWidth int
	// RecordAlign8: a record's alignment inside its parent is 8 whatever
	// its fields; otherwise it is the largest of its fields' alignments.
	RecordAlign8 bool
	// ArrayAlign is the alignment of a numeric array's element data (64 in
	// Rust, for SIMD); 0 means the element's own alignment. Decoding
	// follows relative pointers, so this only matters for sizes.
	ArrayAlign int
	// VolumeRelptr: a relative pointer is (volume index << 48 | offset in
	// that volume); otherwise it is a flat offset into the concatenated data
	// regions of volumes 0, 1, 2...
	VolumeRelptr bool
	// ShmHeaderSize is the size of the header at the start of each shared
	// memory volume, before its data region.
	ShmHeaderSize int
	// MaxVolumes bounds the volumes of one basename.
	MaxVolumes int
	// MetaPadAlways: the metadata area is padded to (1+(8+len)/32)*32
	// bytes, always adding at least one byte (C); otherwise to a multiple
	// of 32 (Rust). Readers use the header's offset, never this.
	MetaPadAlways bool
	// Tensor: the schema code T is a dense tensor (C); in Rust it is an
	// Arrow table.
	Tensor bool
}

// The two dialects read from morloc's source.
var (
	// C is morloc 0.69.0's C runtime (data/morloc/*.c).
	C = Dialect{
		Version:       "0.69.0",
		NilWidth:      1,    // schema.c:318-320 nil_schema
		ShmHeaderSize: 216,  // memory.h:54-85 sizeof(shm_t) on x86-64 glibc
		MaxVolumes:    32,   // memory.h:39
		MetaPadAlways: true, // packet.c:163
		Tensor:        true, // schema.h:34
	}
	// Rust is morloc 0.98.2's Rust runtime (data/rust/morloc-runtime*).
	Rust = Dialect{
		Version:       "0.98.2",
		BigInt:        true,  // morloc-runtime-types/src/schema.rs:377-380
		OptionalSlot:  true,  // schema.rs:627-648
		NilWidth:      0,     // schema.rs:103
		RecordAlign8:  true,  // schema.rs:177-186
		ArrayAlign:    64,    // schema.rs:218-226
		VolumeRelptr:  true,  // shm_types.rs:38-93
		ShmHeaderSize: 168,   // shm_types.rs:144-153, repr(C)
		MaxVolumes:    32768, // shm_types.rs:18
	}
)

// DialectOf returns the dialect of the pools a morloc version generates.
//
// Thresholds (morloc's ChangeLog.md and the reference's `git log -S`):
// 0.69.x is the last C runtime (0.70.0 "port libmorloc and morloc-nexus
// from C to Rust"); from 0.70 the layouts changed step by step: Int became
// j in 0.82, numeric arrays 64-byte aligned in 0.83, optionals a relptr
// slot in 0.86, relptrs volume-indexed in 0.88. Only the two ends were read
// from source, so 0.70 to 0.87 are refused rather than guessed; 0.88 and
// later 0.x are taken as 0.98.2.
func DialectOf(morlocVersion string) (Dialect, error) {
	major, minor, ok := parseVersion(morlocVersion)
	switch {
	case !ok:
		return Dialect{}, fmt.Errorf("morloc version %q: expected MAJOR.MINOR.PATCH", morlocVersion)
	case major == 0 && minor == 69:
		return C, nil
	case major == 0 && minor >= 88:
		d := Rust
		d.Version = morlocVersion
		return d, nil
	case major == 0 && minor < 69:
		return Dialect{}, fmt.Errorf("morloc %s: pools older than 0.69 are not supported (supported: 0.69, 0.88 and later 0.x)", morlocVersion)
	case major == 0:
		return Dialect{}, fmt.Errorf("morloc %s: its pool wire format is between the C runtime of 0.69 and the layouts of 0.88 (Int, array alignment, optionals and relative pointers changed in 0.82-0.88) and is not supported (supported: 0.69, 0.88 and later 0.x)", morlocVersion)
	}
	return Dialect{}, fmt.Errorf("morloc %s: pool wire format not known (supported: 0.69, 0.88 and later 0.x)", morlocVersion)
}

// parseVersion reads "0.98.2" (a leading "v" and a "-rc.1" suffix allowed).
func parseVersion(v string) (major, minor int, ok bool) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	var err1, err2 error
	major, err1 = strconv.Atoi(parts[0])
	minor, err2 = strconv.Atoi(strings.SplitN(parts[1], "-", 2)[0])
	return major, minor, err1 == nil && err2 == nil && major >= 0 && minor >= 0
}
