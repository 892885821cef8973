package morlocwire

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/nexus-mcp/nexus/internal/jsontext"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/msgpack"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// A morloc pool aborts the worker on a msgpack value of the wrong type (an
// assert in libmpack, reference §2.4 [probe]): the encoder is the last line
// of defence. Every value is checked against its schema as it is written,
// and one that does not fit is refused with where and why.

// AppendArg appends one argument packet (DATA, MESG+MSGPACK, no metadata)
// holding v encoded exactly as t says. A value that does not fit t gives a
// *ValueError naming the place inside v and what was expected ("at [2].x:
// 2147483648 does not fit i4 (-2147483648 to 2147483647)"); dst comes back
// unchanged then.
func AppendArg(dst []byte, t *manifest.Type, v json.RawMessage, d Dialect) ([]byte, error) {
	return AppendArgArrays(dst, t, v, nil, d)
}

// AppendArgArrays is AppendArg for a value with arrays in it (ndarray):
// each array's place in v holds null, and its Path (inside v: keys and
// indices, without the argument's index) says where. nexus parses large
// numeric lists into arrays; they are encoded from their bytes, never
// through JSON.
func AppendArgArrays(dst []byte, t *manifest.Type, v json.RawMessage, arrays []ndarray.Array, d Dialect) ([]byte, error) {
	n, err := layout(t, d)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	// msgpack is smaller than the JSON it comes from, but for the arrays
	// (9 bytes a number at most): one allocation for the whole packet.
	grow := HeaderSize + len(v)
	for k := range arrays {
		grow += 9*len(arrays[k].Data)/max(1, arrays[k].DType.Size()) + 16
	}
	dst = slices.Grow(dst, grow)
	dst, lenAt := appendDataHeader(dst)
	e := &encoder{d: d, out: dst, b: v, arrays: arrays}
	i := jsontext.SkipSpace(v, 0)
	if i >= len(v) {
		return dst[:start], refuse("no value")
	}
	end, err := e.value(n, i)
	if err == nil {
		if rest := jsontext.SkipSpace(v, end); rest != len(v) {
			err = fmt.Errorf("invalid character %q after the value", v[rest])
		} else if e.placed != len(arrays) {
			err = fmt.Errorf("%d of the value's %d arrays have no null place in it", len(arrays)-e.placed, len(arrays))
		}
	}
	if err != nil {
		return dst[:start], err
	}
	binary.LittleEndian.PutUint64(e.out[lenAt:], uint64(len(e.out)-lenAt-8))
	return e.out, nil
}

// ArgArrays picks argument i's arrays out of a call's (whose Path[0] is
// the argument's index, as pool.CallOptions.Arrays), with paths inside
// the argument, for AppendArgArrays.
func ArgArrays(arrays []ndarray.Array, i int) []ndarray.Array {
	var out []ndarray.Array
	for _, a := range arrays {
		if len(a.Path) > 0 && a.Path[0] == any(i) {
			a.Path = a.Path[1:]
			out = append(out, a)
		}
	}
	return out
}

// AppendArrayArg appends one argument packet holding the array a, the
// whole argument (its Path is ignored): the fast path of a large [Real] or
// [Int] argument, from its bytes to msgpack without JSON.
func AppendArrayArg(dst []byte, t *manifest.Type, a ndarray.Array, d Dialect) ([]byte, error) {
	n, err := layout(t, d)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	dst = slices.Grow(dst, HeaderSize+16+9*len(a.Data)/max(1, a.DType.Size()))
	dst, lenAt := appendDataHeader(dst)
	e := &encoder{d: d, out: dst}
	a.Path = nil
	if err := e.array(n, &a); err != nil {
		return dst[:start], err
	}
	binary.LittleEndian.PutUint64(e.out[lenAt:], uint64(len(e.out)-lenAt-8))
	return e.out, nil
}

type encoder struct {
	d      Dialect
	out    []byte
	b      []byte // the JSON value
	depth  int
	arrays []ndarray.Array
	placed int            // arrays written so far
	path   []ndarray.Step // where the value being written is, while arrays remain
	orNull bool           // the value being written is an optional's: null would do too
}

func (e *encoder) value(n *node, i int) (int, error) {
	if e.depth++; e.depth > jsontext.MaxDepth {
		return i, fmt.Errorf("value nested deeper than %d levels", jsontext.MaxDepth)
	}
	end, err := e.dispatch(n, i)
	e.depth--
	return end, err
}

// found names the JSON value at b[i] for a message.
func (e *encoder) found(i int) string {
	end, err := jsontext.Value(e.b, i)
	if err != nil {
		return "invalid JSON"
	}
	tok := e.b[i:end]
	switch tok[0] {
	case '"':
		return "the string " + short(string(tok))
	case 't', 'f':
		return string(tok)
	case 'n':
		return "null"
	case '[':
		return "an array"
	case '{':
		return "an object"
	}
	return short(string(tok))
}

func short(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// expected names what a node takes, for a message.
func expected(n *node) string {
	switch n.kind {
	case manifest.Nil:
		return "null (z)"
	case manifest.Bool:
		return "a boolean (b)"
	case manifest.Str:
		return "a string (s)"
	case manifest.Int:
		return "an integer (" + n.code + ")"
	case manifest.Float:
		return "a number (" + n.code + ")"
	case manifest.List:
		if n.isMap {
			return "a list of [key, value] pairs or an object"
		}
		return "a list"
	case manifest.Tuple:
		return fmt.Sprintf("a tuple: an array of %d items", len(n.items))
	case manifest.Record:
		return "a record: an object"
	case manifest.Optional:
		return expected(n.elem) + " or null"
	case manifest.BackRef:
		return expected(n.elem)
	}
	return n.code
}

func (e *encoder) mismatch(n *node, i int, orNull bool) error {
	want := expected(n)
	if orNull {
		want += " or null"
	}
	return refuse(fmt.Sprintf("%s where %s belongs", e.found(i), want))
}

func (e *encoder) dispatch(n *node, i int) (int, error) {
	b := e.b
	if i >= len(b) {
		return i, refuse("unexpected end of the value")
	}
	c := b[i]
	orNull := e.orNull
	e.orNull = false
	if c == 'n' && e.placed < len(e.arrays) {
		if a := e.arrayHere(); a != nil {
			end, err := jsontext.Value(b, i)
			if err != nil {
				return end, err
			}
			e.placed++
			return end, e.array(n, a)
		}
	}
	switch n.kind {
	case manifest.Nil:
		if c == 'n' {
			end, err := jsontext.Value(b, i)
			e.out = msgpack.AppendNil(e.out)
			return end, err
		}
	case manifest.Bool:
		if c == 't' || c == 'f' {
			end, err := jsontext.Value(b, i)
			e.out = msgpack.AppendBool(e.out, c == 't')
			return end, err
		}
	case manifest.Int:
		if c == '-' || c >= '0' && c <= '9' {
			end, err := jsontext.Number(b, i)
			if err != nil {
				return end, err
			}
			return end, e.integer(n, b[i:end])
		}
	case manifest.Float:
		if c == '-' || c >= '0' && c <= '9' {
			end, err := jsontext.Number(b, i)
			if err != nil {
				return end, err
			}
			f, err := strconv.ParseFloat(string(b[i:end]), 64)
			if err != nil {
				return end, refuse(fmt.Sprintf("%s is beyond the range of a double", short(string(b[i:end]))))
			}
			return end, e.float(n, f)
		}
		if c == '"' { // "NaN", "Infinity", "-Infinity": nexus's non-finite reals
			end, escaped, err := jsontext.String(b, i)
			if err != nil {
				return end, err
			}
			if f, ok := ndarray.NonFinite(string(b[i+1 : end-1])); ok && !escaped {
				return end, e.float(n, f)
			}
		}
	case manifest.Str:
		if c == '"' {
			end, escaped, err := jsontext.String(b, i)
			if err != nil {
				return end, err
			}
			s := b[i+1 : end-1]
			if escaped {
				s = []byte(jsontext.Unquote(b[i:end]))
			}
			if uint64(len(s)) > math.MaxUint32 {
				return end, refuse("string longer than 4 GiB")
			}
			e.out = append(msgpack.AppendStrHeader(e.out, len(s)), s...)
			return end, nil
		}
	case manifest.List:
		if c == '[' {
			return e.list(n, i)
		}
		if c == '{' && n.isMap {
			return e.pairs(n, i)
		}
	case manifest.Tuple:
		if c == '[' {
			return e.tuple(n, i)
		}
	case manifest.Record:
		if c == '{' {
			return e.record(n, i)
		}
	case manifest.Optional:
		if c == 'n' {
			end, err := jsontext.Value(b, i)
			e.out = msgpack.AppendNil(e.out)
			return end, err
		}
		e.orNull = true
		return e.value(n.elem, i)
	case manifest.BackRef:
		return e.value(n.elem, i)
	default:
		return i, refuse(n.code + " values cannot be sent")
	}
	if _, err := jsontext.Value(b, i); err != nil {
		return i, err
	}
	return i, e.mismatch(n, i, orNull)
}

// integer writes the integer number tok for the sized or unbounded integer n.
func (e *encoder) integer(n *node, tok []byte) error {
	if v, ok := jsontext.ParseInt64(tok); ok {
		return e.int64(n, v)
	}
	z, err := wholeNumber(tok)
	if err != nil {
		return err
	}
	if z.IsInt64() {
		return e.int64(n, z.Int64())
	}
	switch {
	case n.prim == pU8 && z.Sign() > 0 && z.IsUint64():
		if e.d.BigInt { // 0.98 reads every integer as an i64 (mpack.rs:428-467)
			return refuse(fmt.Sprintf("%s does not fit u8 as morloc %s pools read it (0 to %d)", z, e.d.Version, int64(math.MaxInt64)))
		}
		e.out = msgpack.AppendUint(e.out, z.Uint64())
		return nil
	case n.prim == pBig:
		e.out = appendBigLimbs(e.out, z)
		return nil
	}
	return rangeError(n, z.String())
}

func (e *encoder) int64(n *node, v int64) error {
	if lo, hi, sized := intRange(n.prim); sized && (v < lo || v > hi) {
		return rangeError(n, strconv.FormatInt(v, 10))
	}
	e.out = msgpack.AppendInt(e.out, v)
	return nil
}

var intLimits = map[prim]string{
	pI1: "-128 to 127", pI2: "-32768 to 32767", pI4: "-2147483648 to 2147483647",
	pI8: "-9223372036854775808 to 9223372036854775807",
	pU1: "0 to 255", pU2: "0 to 65535", pU4: "0 to 4294967295", pU8: "0 to 18446744073709551615",
}

func rangeError(n *node, text string) error {
	return refuse(fmt.Sprintf("%s does not fit %s (%s)", short(text), n.code, intLimits[n.prim]))
}

// maxIntExponent bounds the exponent of a number read as an integer: 1e400
// would make a 400-digit integer, and anything larger only exhausts memory.
const maxIntExponent = 400

// wholeNumber reads a JSON number that is not a plain int64 literal
// (2.0, 1e3, a 30-digit integer) as an integer, or explains why it is not one.
func wholeNumber(tok []byte) (*big.Int, error) {
	s := string(tok)
	if k := strings.IndexAny(s, "eE"); k >= 0 {
		exp, err := strconv.Atoi(strings.TrimPrefix(s[k+1:], "+"))
		if err != nil || exp > maxIntExponent || exp < -maxIntExponent {
			return nil, refuse(fmt.Sprintf("%s is not an integer of any size morloc takes", short(s)))
		}
	}
	if len(s) > 4096 {
		return nil, refuse(fmt.Sprintf("%s has more than 4096 digits", short(s)))
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, refuse(fmt.Sprintf("%s is not a number", short(s)))
	}
	if !r.IsInt() {
		return nil, refuse(fmt.Sprintf("%s is not an integer", short(s)))
	}
	return r.Num(), nil
}

// appendBigLimbs writes z (beyond int64) as bin of little-endian
// two's-complement u64 limbs, at least two (v0.98 mpack.rs:282-305; one
// limb would be read as a relptr, since size 1 means an inline i64).
func appendBigLimbs(dst []byte, z *big.Int) []byte {
	// The fewest limbs holding z and its sign bit (for a negative z, the
	// bits of |z|-1), as decimal_to_limbs makes them (eval_ffi.rs:134-194).
	bits := z.BitLen()
	if z.Sign() < 0 {
		bits = new(big.Int).Sub(new(big.Int).Neg(z), big.NewInt(1)).BitLen()
	}
	nl := max(2, (bits+1+63)/64)
	mod := new(big.Int).Lsh(big.NewInt(1), uint(64*nl))
	v := new(big.Int).Set(z)
	if v.Sign() < 0 {
		v.Add(v, mod)
	}
	be := v.FillBytes(make([]byte, 8*nl))
	dst = msgpack.AppendBinHeader(dst, 8*nl)
	for i := len(be) - 1; i >= 0; i-- {
		dst = append(dst, be[i])
	}
	return dst
}

// float writes f (finite or not) for the real n.
func (e *encoder) float(n *node, f float64) error {
	if n.prim == pF4 {
		if !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) > math.MaxFloat32 {
			return refuse(fmt.Sprintf("%s does not fit f4 (a 32-bit float)", ndarray.AppendReal(nil, f)))
		}
		e.out = msgpack.AppendFloat32(e.out, float32(f))
		return nil
	}
	e.out = msgpack.AppendFloat64(e.out, f)
	return nil
}

// arrayHeader32 reserves an array32 header; closeArray writes the
// smallest header once the count is known, moving a small array's items
// back over the bytes saved.
func (e *encoder) openArray() int {
	e.out = append(e.out, 0xdd, 0, 0, 0, 0)
	return len(e.out) - 5
}

func (e *encoder) closeArray(at, count int) error {
	if uint64(count) > math.MaxUint32 {
		return refuse("more than 4294967295 items")
	}
	body := len(e.out) - at - 5
	switch {
	case count < 16 && body <= 4096:
		e.out[at] = 0x90 | byte(count)
		copy(e.out[at+1:], e.out[at+5:])
		e.out = e.out[:len(e.out)-4]
	case count <= math.MaxUint16 && body <= 4096:
		e.out[at] = 0xdc
		binary.BigEndian.PutUint16(e.out[at+1:], uint16(count))
		copy(e.out[at+3:], e.out[at+5:])
		e.out = e.out[:len(e.out)-2]
	default:
		binary.BigEndian.PutUint32(e.out[at+1:], uint32(count))
	}
	return nil
}

func (e *encoder) track() bool { return e.placed < len(e.arrays) }

func (e *encoder) list(n *node, i int) (int, error) {
	at := e.openArray()
	count := 0
	mark := len(e.path)
	track := e.track()
	end, err := jsontext.ArrayItems(e.b, i, func(vs int) (int, error) {
		if track {
			e.path = append(e.path[:mark], ndarray.Step{Idx: count})
		}
		ve, err := e.value(n.elem, vs)
		if err != nil {
			return ve, under(err, seg{idx: count})
		}
		count++
		return ve, nil
	}, 1)
	e.path = e.path[:mark]
	return e.closeCounted(n, at, count, end, err, "a list of %d items")
}

// pairs writes a Map given as an object ({"k": v}) as the list of [key,
// value] pairs its schema declares, keys in the order given (nexus sends
// string-keyed Maps to pools as objects: internal/argmap/values.go strMap).
func (e *encoder) pairs(n *node, i int) (int, error) {
	at := e.openArray()
	count := 0
	mark := len(e.path)
	track := e.track()
	val := n.elem.items[1]
	end, err := jsontext.ObjectMembers(e.b, i, func(key []byte, escaped bool, vs int) (int, error) {
		name := string(key[1 : len(key)-1])
		if escaped {
			name = jsontext.Unquote(key)
		}
		if track {
			e.path = append(e.path[:mark], ndarray.Step{Key: name, Idx: -1})
		}
		e.out = append(msgpack.AppendStrHeader(append(e.out, 0x92), len(name)), name...)
		ve, err := e.value(val, vs)
		if err != nil {
			return ve, under(err, seg{key: name, idx: -1})
		}
		count++
		return ve, nil
	}, 1)
	e.path = e.path[:mark]
	return e.closeCounted(n, at, count, end, err, "a map of %d entries")
}

// closeCounted ends a list or a Map's pairs begun at at, of count items
// read up to end (or failed there with err), refusing a count other than
// the fixed length its type declares; what words the count.
func (e *encoder) closeCounted(n *node, at, count, end int, err error, what string) (int, error) {
	if err != nil {
		return end, err
	}
	if n.fixedLen > 0 && count != n.fixedLen {
		return end, refuse(fmt.Sprintf(what+" where its type says exactly %d", count, n.fixedLen))
	}
	return end, e.closeArray(at, count)
}

func (e *encoder) tuple(n *node, i int) (int, error) {
	e.out = msgpack.AppendArrayHeader(e.out, len(n.items))
	count := 0
	mark := len(e.path)
	track := e.track()
	end, err := jsontext.ArrayItems(e.b, i, func(vs int) (int, error) {
		if count >= len(n.items) {
			return vs, errTooMany
		}
		if track {
			e.path = append(e.path[:mark], ndarray.Step{Idx: count})
		}
		ve, err := e.value(n.items[count], vs)
		if err != nil {
			return ve, under(err, seg{idx: count})
		}
		count++
		return ve, nil
	}, 1)
	e.path = e.path[:mark]
	if err == errTooMany || err == nil && count != len(n.items) {
		n2, _ := countItems(e.b, i)
		return end, refuse(fmt.Sprintf("an array of %d items where a tuple of exactly %d belongs", n2, len(n.items)))
	}
	return end, err
}

var errTooMany = errors.New("too many items")

func countItems(b []byte, i int) (int, error) {
	k := 0
	_, err := jsontext.Array(b, i, func(int, int) error { k++; return nil })
	return k, err
}

// record writes an object as the msgpack array of its fields in the
// schema's order (v0.69 serialize.c:563-583; v0.98 mpack.rs:373-380): every
// field the type requires, an absent optional field as nil, no other.
func (e *encoder) record(n *node, i int) (int, error) {
	var starts [64]int
	for k := range n.items {
		starts[k] = -1
	}
	end, err := jsontext.ObjectMembers(e.b, i, func(key []byte, escaped bool, vs int) (int, error) {
		name := string(key[1 : len(key)-1])
		if escaped {
			name = jsontext.Unquote(key)
		}
		k := -1
		for j, fk := range n.keys {
			if fk == name {
				k = j
				break
			}
		}
		if k < 0 {
			return vs, under(refuse("field not in the record (its fields: "+strings.Join(n.keys, ", ")+")"), seg{key: name, idx: -1})
		}
		if starts[k] >= 0 {
			return vs, under(refuse("field given twice"), seg{key: name, idx: -1})
		}
		starts[k] = vs
		return jsontext.Skip(e.b, vs, 1)
	}, 1)
	if err != nil {
		return end, err
	}
	e.out = msgpack.AppendArrayHeader(e.out, len(n.items))
	mark := len(e.path)
	track := e.track()
	for k, f := range n.items {
		if starts[k] < 0 {
			if f.kind != manifest.Optional {
				return end, under(refuse("missing field: "+expected(f)+" is required"), seg{key: n.keys[k], idx: -1})
			}
			e.out = msgpack.AppendNil(e.out)
			continue
		}
		if track {
			e.path = append(e.path[:mark], ndarray.Step{Key: n.keys[k], Idx: -1})
		}
		if _, err := e.value(f, starts[k]); err != nil {
			e.path = e.path[:mark]
			return end, under(err, seg{key: n.keys[k], idx: -1})
		}
	}
	e.path = e.path[:mark]
	return end, nil
}

// arrayHere returns the array whose path is where the encoder is, if any.
func (e *encoder) arrayHere() *ndarray.Array { return ndarray.At(e.arrays, e.path) }
