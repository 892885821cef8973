package eval

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// packetMagic opens every morloc packet file (voidstar data, stream files).
const packetMagic = 0x0707f86d

func (r *run) path(p string) string {
	if r.dir != "" && !filepath.IsAbs(p) {
		return filepath.Join(r.dir, p)
	}
	return p
}

// evalLevel evaluates the level of @save or @write (intrinsic), which
// must be an integer.
func (r *run) evalLevel(n *node, intrinsic string) (int64, error) {
	lv, err := r.eval(n)
	if err != nil {
		return 0, err
	}
	level, ok, berr := boundInt(lv)
	if berr != nil || !ok {
		return 0, at(n, internal("type mismatch: a %s level is %s, not an integer", intrinsic, lv.describeKind()))
	}
	return level, nil
}

// evalSave is @save, @savem and @savej (docs/spec.md §7.3.14): level, value and
// path are evaluated in that order; the level must be 0..9 whatever the
// format; the file is written atomically.
func (r *run) evalSave(n *node) (Value, error) {
	level, err := r.evalLevel(n.level, "@save")
	if err != nil {
		return unit, err
	}
	if level < 0 || level > 9 {
		return unit, at(n, internal("@save compression level must be in 0..=9, got %d", level))
	}
	v, err := r.eval(n.value)
	if err != nil {
		return unit, err
	}
	pv, err := r.evalAs(n.dest, vStr, "a @save path is %s, not a string")
	if err != nil {
		return unit, err
	}
	var data []byte
	var perr error
	switch n.format {
	case "json":
		data, perr = r.toJSON(v, n.value.typ, morlocForm)
	case "msgpack":
		data, perr = r.packMsgpack(v, n.value.typ)
	default:
		return unit, &Error{Kind: Unsupported, Path: n.path, Msg: fmt.Sprintf("@save: morloc's binary voidstar format is not supported by nexus (saving to '%s'); @savej writes JSON and @savem msgpack", pv.s)}
	}
	if perr != nil {
		var e *Error
		if errors.As(perr, &e) && e.Kind == Limit {
			return unit, e
		}
		if errors.As(perr, &e) {
			// The value has no form in this format (a table, a shape
			// mismatch): a save failure, which morloc lets @catch take.
			return unit, at(n, thrown("@save(%s): %s", n.format, e.Msg))
		}
		return unit, at(n, thrown("@save(%s): %s", n.format, perr.Error()))
	}
	if err := writeAtomic(r.path(pv.s), data); err != nil {
		return unit, at(n, thrown("@save(%s): failed to write '%s': %s", n.format, pv.s, ioReason(err)))
	}
	return unit, nil
}

// writeAtomic writes data to a temporary file beside path and renames it
// into place, so that a reader never sees half a file.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp, 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
	}
	return werr
}

func ioReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// evalLoad is @load: read a file as the node's type, detecting its format
// as morloc's loader does: a bare text file for Str, bare nan/inf for a
// real, JSON (by a .json name or by its first byte), msgpack (by a .mpk or
// .msgpack name, or when JSON does not read). A morloc packet is refused:
// nexus does not read morloc's voidstar format. Every failure is
// catchable, as in morloc.
func (r *run) evalLoad(n *node) (Value, error) {
	pv, err := r.evalAs(n.child, vStr, "a @load path is %s, not a string")
	if err != nil {
		return unit, err
	}
	path := pv.s
	failed := func() error { return at(n, thrown("@load: failed to load '%s'", path)) }
	f, oerr := os.Open(r.path(path))
	if oerr != nil {
		return unit, failed()
	}
	defer f.Close()
	if st, serr := f.Stat(); serr != nil || st.IsDir() {
		return unit, failed()
	}
	// Read no more than the memory budget allows.
	data, rerr := io.ReadAll(io.LimitReader(f, max(r.bytes, 0)+1))
	if rerr != nil {
		return unit, at(n, thrown("@load: failed to load '%s': %s", path, ioReason(rerr)))
	}
	if err := r.alloc(int64(len(data))); err != nil {
		return unit, err
	}
	if err := r.step(int64(len(data)) / 64); err != nil {
		return unit, err
	}
	v, lerr := r.decodeFile(path, data, n.typ)
	if lerr != nil {
		return unit, at(n, lerr)
	}
	return v, nil
}

func (r *run) decodeFile(path string, data []byte, t *Type) (Value, *Error) {
	if len(data) == 0 {
		return unit, thrown("Cannot parse 0-length data")
	}
	if len(data) >= 4 && binary.LittleEndian.Uint32(data) == packetMagic {
		return unit, &Error{Kind: Unsupported, Msg: fmt.Sprintf("@load: '%s' is a morloc binary packet (voidstar), which nexus does not read; save it with @savej (JSON) or @savem (msgpack)", path)}
	}
	rt := t.resolve()
	inner := rt
	if rt.kind == kOpt {
		inner = rt.elem.resolve()
	}
	switch inner.kind {
	case kStr, kIFile, kOStream, kIStream:
		// A text file that does not start as a JSON string is the string.
		first := bytes.TrimLeft(data, " \t\n\r\v\f")
		if (len(first) == 0 || first[0] != '"') && utf8.Valid(data) {
			s := strings.TrimSuffix(string(data), "\n")
			s = strings.TrimSuffix(s, "\r")
			return strValue(s), nil
		}
	case kFloat:
		switch tok := strings.TrimPrefix(strings.TrimSpace(string(data)), `\`); tok {
		case "inf", "-inf", "nan":
			j := jnode{k: jStr, s: tok}
			v, derr := (&decoder{}).value(&j, t)
			if derr != nil {
				return unit, thrown("%s", derr.Error())
			}
			return v, nil
		}
	case kTable:
		return unit, &Error{Kind: Unsupported, Msg: fmt.Sprintf("@load: '%s': nexus does not load tables", path)}
	}
	readJSON := func() (Value, *Error) {
		j, jerr := parseJSON(data)
		if jerr != nil {
			return unit, thrown("%s", jerr.Error())
		}
		v, derr := (&decoder{}).value(&j, t)
		if derr != nil {
			return unit, thrown("%s", derr.Error())
		}
		return v, nil
	}
	readMsgpack := func() (Value, *Error) {
		v, err := unpackMsgpack(data, t)
		if err != nil {
			return unit, thrown("%s", err.Error())
		}
		return v, nil
	}
	switch {
	case strings.HasSuffix(path, ".json"):
		return readJSON()
	case strings.HasSuffix(path, ".mpk"), strings.HasSuffix(path, ".msgpack"):
		return readMsgpack()
	}
	c := data[0]
	mayBeJSON := strings.IndexByte(`'"[{tfn`+"\t\n\r -0123456789", c) >= 0
	if (len(data) > 1 && mayBeJSON) || (len(data) == 1 && c >= '0' && c <= '9') {
		v, jerr := readJSON()
		if jerr == nil {
			return v, nil
		}
		if v, merr := readMsgpack(); merr == nil {
			return v, nil
		}
		return unit, jerr
	}
	return readMsgpack()
}
