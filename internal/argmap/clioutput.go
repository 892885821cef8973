package argmap

import (
	"bytes"
	"io"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// cliPiece is how many numbers WriteCLIResult writes at once: enough that
// ndarray writes them on two cores, few enough that their text is a couple
// of megabytes.
const cliPiece = 1 << 17

// WriteCLIResult writes a result that is one array (a large list of
// numbers from a pool) to w as CLIResultValue would write it, then a
// newline, a piece at a time: its JSON text never exists whole, which
// for a million Reals spares nexus 19 MB. ok is false, with nothing
// written, for any other result, and for one whose writing could fail
// half-way (CLIResultValue then says what is wrong with it).
func WriteCLIResult(w io.Writer, ret *manifest.Return, v ndarray.Value) (ok bool, err error) {
	if len(v.Arrays) != 1 || len(v.Arrays[0].Path) != 0 || string(bytes.TrimSpace(v.JSON)) != "null" {
		return false, nil
	}
	a := &v.Arrays[0]
	var t *manifest.Type
	if ret != nil {
		t = ret.T
	}
	if a.Check() != nil || len(a.Shape) == 0 {
		return false, nil
	}
	kind, err := arrayKind(t, a)
	if err != nil || a.DType == ndarray.F8 && kind != ndarray.Real {
		return false, nil // a mismatch, or an f8 Int that may not be whole
	}
	if t != nil && kind == ndarray.Int && a.DType == ndarray.I8 {
		if (&resultWriter{}).arrayRange(t, a) != nil {
			return false, nil
		}
	}
	top := a.Shape[0]
	inner := 1
	for _, d := range a.Shape[1:] {
		inner *= d
	}
	step := max(1, cliPiece/max(inner, 1))
	size := a.DType.Size()
	var buf []byte
	if _, err := w.Write([]byte{'['}); err != nil {
		return true, err
	}
	for from := 0; from < top; from += step {
		to := min(top, from+step)
		sub := ndarray.Array{DType: a.DType, Shape: append([]int{to - from}, a.Shape[1:]...), Data: a.Data[from*inner*size : to*inner*size]}
		if buf, err = ndarray.AppendJSONSpelled(buf[:0], &sub, kind, ndarray.MorlocSpelling); err != nil {
			return true, err // not reached: what could fail was refused above
		}
		piece := buf[1 : len(buf)-1] // the items, without the sub-array's brackets
		if from > 0 {
			piece = buf[:len(buf)-1]
			piece[0] = ','
		}
		if _, err := w.Write(piece); err != nil {
			return true, err
		}
	}
	_, err = w.Write([]byte("]\n"))
	return true, err
}
