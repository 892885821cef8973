// Package ndarray owns the binary form of numeric arrays that nexus and
// pools exchange (docs/internals.md, "Arrays"): the dtypes, the
// descriptor that travels in a message beside each blob, and the JSON text
// of an array's numbers, written exactly as nexus writes the same numbers
// when they come as JSON. It imports nothing else from nexus.
package ndarray

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"
)

// DType is an array's element type.
type DType string

// The dtypes of protocol 2, all little-endian.
const (
	I4 DType = "i4" // 32-bit signed integer
	I8 DType = "i8" // 64-bit signed integer
	F8 DType = "f8" // IEEE 754 binary64
)

// Size is the element size in bytes, 0 for an unknown dtype.
func (d DType) Size() int {
	switch d {
	case I4:
		return 4
	case I8, F8:
		return 8
	}
	return 0
}

// Number says how a value's numbers are declared: as Int or as Real. It
// decides how they are written as JSON.
type Number int

const (
	Int Number = iota
	Real
)

func (n Number) String() string {
	if n == Real {
		return "real"
	}
	return "int"
}

// Array is one array: where it goes, its dtype and shape, and its bytes in
// row-major order.
type Array struct {
	// Path is where the array goes: in a call, the argument's index, then
	// object keys (string) and list indices (int) inside it; in a result, a
	// path inside the value ([] for the value itself).
	Path  []any
	DType DType
	Shape []int
	Data  []byte
}

// Step is one step of a place in a value, as a writer walking the value
// keeps it: an object's member Key (Idx -1), or a list's element Idx.
type Step struct {
	Key string
	Idx int
}

// At returns the first of arrays whose Path is the place path, or nil.
func At(arrays []Array, path []Step) *Array {
next:
	for i := range arrays {
		a := &arrays[i]
		if len(a.Path) != len(path) {
			continue
		}
		for k, p := range a.Path {
			switch x := p.(type) {
			case int:
				if path[k].Idx != x {
					continue next
				}
			case string:
				if path[k].Idx >= 0 || path[k].Key != x {
					continue next
				}
			default:
				continue next
			}
		}
		return a
	}
	return nil
}

// MaxElements bounds an array's element count: no blob holds more.
const MaxElements = 1 << 28

// Len is the number of elements the shape holds.
func (a *Array) Len() int {
	n := 1
	for _, d := range a.Shape {
		n *= d
	}
	return n
}

// Check reports what is wrong with an array received from a pool, or nil.
func (a *Array) Check() error {
	size := a.DType.Size()
	if size == 0 {
		return fmt.Errorf("array at %s: unknown dtype %q (want i4, i8 or f8)", pathString(a.Path), a.DType)
	}
	if len(a.Shape) == 0 {
		return fmt.Errorf("array at %s: empty shape (its rank must be at least 1)", pathString(a.Path))
	}
	n := 1
	for _, d := range a.Shape {
		if d < 0 {
			return fmt.Errorf("array at %s: negative dimension in shape %v", pathString(a.Path), a.Shape)
		}
		if d > 0 && n > MaxElements/d {
			return fmt.Errorf("array at %s: shape %v holds more than %d elements", pathString(a.Path), a.Shape, MaxElements)
		}
		n *= d
	}
	if len(a.Data) != n*size {
		return fmt.Errorf("array at %s: shape %v of %s needs %d bytes, the blob has %d", pathString(a.Path), a.Shape, a.DType, n*size, len(a.Data))
	}
	for _, p := range a.Path {
		switch p.(type) {
		case int, string:
		default:
			return fmt.Errorf("array at %s: path elements must be strings or integers", pathString(a.Path))
		}
	}
	return nil
}

func pathString(path []any) string {
	b, _ := json.Marshal(path)
	return string(b)
}

// descriptor is an array as a message describes it.
type descriptor struct {
	Path  []json.RawMessage `json:"path"`
	DType DType             `json:"dtype"`
	Shape []int             `json:"shape"`
}

// AppendDescriptors writes the "arrays" member's value for arrs.
func AppendDescriptors(dst []byte, arrs []Array) []byte {
	dst = append(dst, '[')
	for i := range arrs {
		a := &arrs[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"path":[`...)
		for j, p := range a.Path {
			if j > 0 {
				dst = append(dst, ',')
			}
			switch x := p.(type) {
			case int:
				dst = strconv.AppendInt(dst, int64(x), 10)
			case string:
				k, _ := json.Marshal(x)
				dst = append(dst, k...)
			}
		}
		dst = append(dst, `],"dtype":"`...)
		dst = append(dst, a.DType...)
		dst = append(dst, `","shape":[`...)
		for j, d := range a.Shape {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, int64(d), 10)
		}
		dst = append(dst, "]}"...)
	}
	return append(dst, ']')
}

// ParseDescriptors reads an "arrays" member (without the blobs' data).
func ParseDescriptors(raw json.RawMessage) ([]Array, error) {
	var ds []descriptor
	if err := json.Unmarshal(raw, &ds); err != nil {
		return nil, fmt.Errorf("arrays: %v", err)
	}
	out := make([]Array, len(ds))
	for i, d := range ds {
		path := make([]any, len(d.Path))
		for j, p := range d.Path {
			var s string
			var n int
			switch {
			case json.Unmarshal(p, &n) == nil:
				path[j] = n
			case json.Unmarshal(p, &s) == nil:
				path[j] = s
			default:
				return nil, fmt.Errorf("arrays[%d]: path element %s is neither a string nor an integer", i, p)
			}
		}
		if d.Shape == nil {
			return nil, fmt.Errorf("arrays[%d]: no shape", i)
		}
		out[i] = Array{Path: path, DType: d.DType, Shape: d.Shape}
	}
	return out, nil
}

// NotWhole is an f8 element that is not a whole number in an array whose
// numbers are declared Int.
type NotWhole struct {
	Index int    // the element's index in row-major order
	Text  string // the number as a Real is written
}

func (e *NotWhole) Error() string {
	return fmt.Sprintf("element %d is %s, not an integer", e.Index, e.Text)
}

// ErrNotFinite is returned for an f8 array holding NaN or an infinity,
// which JSON cannot carry.
var ErrNotFinite = errors.New("NaN or an infinity, which JSON cannot represent")

// AppendJSON writes the nested lists a stands for, as nexus writes numbers
// to clients: an Int as its integer digits, a Real as the shortest text
// that reads back as the same double (AppendReal). An f8 element declared
// Int must be whole (else a *NotWhole); a NaN or an infinity is an error
// (ErrNotFinite).
func AppendJSON(dst []byte, a *Array, kind Number) ([]byte, error) {
	return AppendJSONSpelled(dst, a, kind, nil)
}

// AppendJSONSpelled is AppendJSON writing a Real's NaN and infinities in
// the spelling sp (nil: they are an error).
func AppendJSONSpelled(dst []byte, a *Array, kind Number, sp *Spelling) ([]byte, error) {
	if err := a.Check(); err != nil {
		return nil, err
	}
	top := a.Shape[0]
	dst = append(dst, '[')
	var err error
	if parts := min(runtime.GOMAXPROCS(0), 4); parts > 1 && a.Len() >= parallelMin && top >= parts {
		dst, err = appendParts(dst, a, kind, sp, parts)
	} else {
		dst, err = appendItems(dst, a, kind, sp, 0, top)
	}
	if err != nil {
		return nil, err
	}
	return append(dst, ']'), nil
}

// appendParts writes a large array's top-level items in parts at once, on
// the cores the pool left idle while it waits for its reply. Each part is
// written straight into its own stretch of dst's spare capacity (grown
// once to the estimated size if it is short), and the parts are then
// moved down against each other in place: no buffer of its own per part,
// which would make a large result's memory half as large again. A
// part that outgrows its stretch (the estimate is a sample's) gets a
// buffer of its own from append, and then the parts are joined in a new
// buffer instead.
func appendParts(dst []byte, a *Array, kind Number, sp *Spelling, parts int) ([]byte, error) {
	top := a.Shape[0]
	base := len(dst)
	// JSONSize counts the opening bracket, which dst already ends with.
	if est := JSONSize(a, kind) - 1; cap(dst)-base < est {
		dst = slices.Grow(dst, est+parts*64)
	}
	per := (cap(dst)-base)/parts - 1 // a byte between stretches for the comma
	outs := make([][]byte, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := 1; p < parts; p++ {
		wg.Go(func() {
			at := base + p*(per+1)
			outs[p], errs[p] = appendItems(dst[at:at:at+per], a, kind, sp, top*p/parts, top*(p+1)/parts)
		})
	}
	outs[0], errs[0] = appendItems(dst[base:base:base+per], a, kind, sp, 0, top/parts)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	inPlace := true
	n := parts - 1
	room := dst[:cap(dst)]
	for p, out := range outs {
		n += len(out)
		inPlace = inPlace && cap(out) > 0 && &out[:1][0] == &room[base+p*(per+1)]
	}
	if !inPlace {
		// Read the parts where they are before anything is moved.
		joined := make([]byte, base, base+n+1)
		copy(joined, dst[:base])
		for p, out := range outs {
			if p > 0 {
				joined = append(joined, ',')
			}
			joined = append(joined, out...)
		}
		return joined, nil
	}
	// Every part starts at or after the end of the ones before it, plus
	// its comma: copy moves each down without overwriting one not yet moved.
	end := base + len(outs[0])
	for _, out := range outs[1:] {
		dst = dst[:end+1+len(out)]
		dst[end] = ','
		copy(dst[end+1:], out)
		end += 1 + len(out)
	}
	return dst[:end], nil
}

// parallelMin is the size from which AppendJSON writes an array in parts
// at once.
const parallelMin = 1 << 16

// appendItems writes a's top-level items [from, to), comma-separated.
func appendItems(dst []byte, a *Array, kind Number, sp *Spelling, from, to int) ([]byte, error) {
	if len(a.Shape) == 1 {
		return appendRow(dst, a, kind, sp, from, to)
	}
	inner := 1
	for _, d := range a.Shape[1:] {
		inner *= d
	}
	size := a.DType.Size()
	var err error
	for i := from; i < to; i++ {
		if i > from {
			dst = append(dst, ',')
		}
		sub := Array{Path: a.Path, DType: a.DType, Shape: a.Shape[1:], Data: a.Data[i*inner*size : (i+1)*inner*size]}
		if dst, err = appendNested(dst, &sub, kind, sp); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// appendNested writes a (checked) as nested lists, innermost rows at once.
func appendNested(dst []byte, a *Array, kind Number, sp *Spelling) ([]byte, error) {
	dst = append(dst, '[')
	var err error
	if dst, err = appendItems(dst, a, kind, sp, 0, a.Shape[0]); err != nil {
		return nil, err
	}
	return append(dst, ']'), nil
}

// JSONSize estimates the bytes AppendJSON writes for a: exact for small
// integer arrays, from a sample of the elements otherwise. Callers size their buffers
// with it: a buffer grown by doubling leaves every smaller size behind.
func JSONSize(a *Array, kind Number) int {
	n := a.Len()
	if n == 0 || a.Check() != nil {
		return 2 * len(a.Shape)
	}
	brackets := 2
	rows := 1
	for _, d := range a.Shape[:len(a.Shape)-1] {
		rows *= d
		brackets += rows * 2
	}
	size := brackets + n - 1 // separators, about
	if n <= 4096 && a.DType != F8 && kind == Int {
		for i := 0; i < n; i++ {
			size += intDigits(a.intAt(i))
		}
		return size // exact
	}
	// The mean length of up to 64 elements spread over the array, and a
	// tenth more.
	step := max(1, n/64)
	sampled, length := 0, 0
	var buf [32]byte
	for i := 0; i < n; i += step {
		one := Array{DType: a.DType, Shape: []int{1}, Data: a.Data[i*a.DType.Size() : (i+1)*a.DType.Size()]}
		out, err := appendRow(buf[:0], &one, kind, ClientSpelling, 0, 1)
		if err != nil {
			return size + 24*n
		}
		length += len(out)
		sampled++
	}
	return size + n*length/sampled*11/10
}

// appendInt writes v's digits straight into dst, two at a time: the loop
// of a large integer result, where strconv's copy from its own buffer was
// a third of the cost.
func appendInt(dst []byte, v int64) []byte {
	if v < 0 {
		if v == math.MinInt64 {
			return append(dst, "-9223372036854775808"...)
		}
		dst = append(dst, '-')
		v = -v
	}
	n := uintDigits(uint64(v))
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	i := start + n
	u := uint64(v)
	for u >= 100 {
		q := u / 100
		j := (u - q*100) * 2
		i -= 2
		dst[i], dst[i+1] = digitPairs[j], digitPairs[j+1]
		u = q
	}
	if u >= 10 {
		j := u * 2
		dst[i-2], dst[i-1] = digitPairs[j], digitPairs[j+1]
	} else {
		dst[i-1] = byte('0' + u)
	}
	return dst
}

// uintDigits is the length of u's decimal text, by comparisons rather
// than divisions.
func uintDigits(u uint64) int {
	n := 1
	for _, p := range pow10 {
		if u < p {
			return n
		}
		n++
	}
	return n
}

var pow10 = [...]uint64{1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// intAt is integer element i of an i4 or i8 array.
func (a *Array) intAt(i int) int64 {
	if a.DType == I4 {
		return int64(int32(binary.LittleEndian.Uint32(a.Data[4*i:])))
	}
	return int64(binary.LittleEndian.Uint64(a.Data[8*i:]))
}

// intDigits is the length of v's decimal text.
func intDigits(v int64) int {
	n := 1
	if v < 0 {
		n++
		if v == math.MinInt64 {
			return 20
		}
		v = -v
	}
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

// appendRow writes elements [from, to) of a, comma-separated: the loop of
// every large result, one per dtype and kind.
func appendRow(dst []byte, a *Array, kind Number, sp *Spelling, from, to int) ([]byte, error) {
	d := a.Data
	switch {
	case a.DType == I4:
		for i := from; i < to; i++ {
			if i > from {
				dst = append(dst, ',')
			}
			v := int32(binary.LittleEndian.Uint32(d[4*i:]))
			if kind == Int {
				dst = strconv.AppendInt(dst, int64(v), 10)
			} else {
				dst = AppendReal(dst, float64(v))
			}
		}
	case a.DType == I8 && kind == Int:
		for i := from; i < to; i++ {
			if i > from {
				dst = append(dst, ',')
			}
			dst = appendInt(dst, int64(binary.LittleEndian.Uint64(d[8*i:])))
		}
	case a.DType == I8:
		for i := from; i < to; i++ {
			if i > from {
				dst = append(dst, ',')
			}
			dst = AppendReal(dst, float64(int64(binary.LittleEndian.Uint64(d[8*i:]))))
		}
	default: // F8
		for i := from; i < to; i++ {
			if i > from {
				dst = append(dst, ',')
			}
			f := math.Float64frombits(binary.LittleEndian.Uint64(d[8*i:]))
			switch {
			case (math.IsNaN(f) || math.IsInf(f, 0)) && kind == Real && sp != nil:
				dst = sp.Append(dst, f)
			case math.IsNaN(f) || math.IsInf(f, 0):
				return nil, fmt.Errorf("array at %s: element %d is %w", pathString(a.Path), i, ErrNotFinite)
			case kind == Int && f == math.Trunc(f):
				dst = AppendWhole(dst, f)
			case kind == Int:
				return nil, &NotWhole{Index: i, Text: string(AppendReal(nil, f))}
			default:
				dst = AppendReal(dst, f)
			}
		}
	}
	return dst, nil
}

// AppendReal writes f as encoding/json does: the shortest text that reads
// back as f, in exponent form below 1e-6 and from 1e21 up (so 1 is "1",
// 0.1 is "0.1", 1e21 is "1e+21", -0 is "-0"). f must be finite.
func AppendReal(dst []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 → e-9, as encoding/json writes it.
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// AppendWhole writes a whole double as integer digits: below 1e21 its
// exact value (as R and C++ print it), from 1e21 up the digits of its
// shortest text (as "1e+300" reads). f must be finite and whole.
func AppendWhole(dst []byte, f float64) []byte {
	if math.Abs(f) < 1e21 {
		if f == 0 {
			return append(dst, '0') // -0 is the integer 0
		}
		return strconv.AppendFloat(dst, f, 'f', 0, 64)
	}
	// Shortest digits d1.d2...dn e+X: the integer d1d2...dn followed by X-(n-1) zeros.
	var buf [32]byte
	s := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	if s[0] == '-' {
		dst = append(dst, '-')
		s = s[1:]
	}
	e := 0
	for i, c := range s {
		if c == 'e' {
			exp, _ := strconv.Atoi(string(s[i+1:]))
			mant := s[:i]
			digits := 0
			for _, m := range mant {
				if m != '.' {
					dst = append(dst, m)
					digits++
				}
			}
			e = exp - (digits - 1)
			break
		}
	}
	for ; e > 0; e-- {
		dst = append(dst, '0')
	}
	return dst
}

// Value is a JSON value with arrays in it: each array's place in the JSON
// holds null (docs/internals.md, "Arrays").
type Value struct {
	JSON   json.RawMessage
	Arrays []Array
}

// Ret is what a call tells its pool of the result: when Rank > 0, that it
// may come as an array (the declared return type is Rank nested lists of
// numbers declared as Number; the call's "ret" member); and when Type is
// set, the declared type itself (the call's "returns" member, JSON), by
// which a runtime shapes the value (docs/internals.md, "Declared
// types"). A Ret is shared by every call of its command: never modify one.
type Ret struct {
	Rank   int
	Number Number
	Type   []byte
	// Args are the declared types of the arguments, a JSON array of them
	// in the form of Type: the call's "takes" member, for a pool that
	// asked for them (its manifest says "arrays": "numpy").
	Args []byte
}

// AppendRet writes the call's "ret" member value (r.Rank > 0).
func AppendRet(dst []byte, r *Ret) []byte {
	dst = append(dst, `{"rank":`...)
	dst = strconv.AppendInt(dst, int64(r.Rank), 10)
	dst = append(dst, `,"number":"`...)
	dst = append(dst, r.Number.String()...)
	return append(dst, `"}`...)
}

// NarrowI8 returns an i8 array as i4 when every element fits 32 bits.
func NarrowI8(a *Array) (Array, bool) {
	if a.DType != I8 || len(a.Data)%8 != 0 {
		return Array{}, false
	}
	n := len(a.Data) / 8
	out := make([]byte, 4*n)
	for i := 0; i < n; i++ {
		v := int64(binary.LittleEndian.Uint64(a.Data[8*i:]))
		if v < math.MinInt32 || v > math.MaxInt32 {
			return Array{}, false
		}
		binary.LittleEndian.PutUint32(out[4*i:], uint32(int32(v)))
	}
	return Array{Path: a.Path, DType: I4, Shape: a.Shape, Data: out}, true
}

// CheckJSON reports the error AppendJSONSpelled would give for a, without
// writing anything: a caller that writes a's text later, a piece at a time
// (WriteJSON), must know before its first byte goes out that the rest will.
func CheckJSON(a *Array, kind Number, sp *Spelling) error {
	if err := a.Check(); err != nil {
		return err
	}
	if a.DType != F8 || kind == Real && sp != nil {
		return nil // nothing appendRow refuses
	}
	row := a.Shape[len(a.Shape)-1] // appendRow counts elements within a row
	d := a.Data
	for k := 0; k < len(d)/8; k++ {
		f := math.Float64frombits(binary.LittleEndian.Uint64(d[8*k:]))
		switch {
		case math.IsNaN(f) || math.IsInf(f, 0):
			return fmt.Errorf("array at %s: element %d is %w", pathString(a.Path), k%row, ErrNotFinite)
		case kind == Int && f != math.Trunc(f):
			return &NotWhole{Index: k % row, Text: string(AppendReal(nil, f))}
		}
	}
	return nil
}

// WriteJSON writes the text AppendJSONSpelled gives for a (checked with
// CheckJSON) to emit, in pieces of about piece bytes written into one
// buffer it reuses: the text of a large array never exists whole. A piece
// is valid only until emit returns.
func WriteJSON(a *Array, kind Number, sp *Spelling, piece int, emit func([]byte) error) error {
	top := a.Shape[0]
	// Top-level items per piece, from the estimated size of one.
	per := max(1, piece/max(1, JSONSize(a, kind)/max(1, top)))
	buf := make([]byte, 0, piece+piece/4)
	buf = append(buf, '[')
	for from := 0; from < top; from += per {
		if from > 0 {
			buf = append(buf, ',')
		}
		var err error
		if buf, err = appendItems(buf, a, kind, sp, from, min(top, from+per)); err != nil {
			return err
		}
		if len(buf) >= piece {
			if err := emit(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	return emit(append(buf, ']'))
}
