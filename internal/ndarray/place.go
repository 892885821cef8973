package ndarray

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/nexus-mcp/nexus/internal/jsontext"
)

// AppendPoolJSON writes the nested lists a stands for as nexus writes them
// to a pool that does not take a's dtype: integers as digits, and each f8
// element as the shortest text that reads back as it, always with a
// fraction or an exponent ("2.0"), so that a Real stays a float; a NaN or
// an infinity as its string on the wire ("NaN", "Infinity", "-Infinity").
// An f8 array of rank 0 (shape []) is one number, which is how a
// non-finite Real argument travels (docs/internals.md, "Values").
func AppendPoolJSON(dst []byte, a *Array) ([]byte, error) {
	if a.DType == F8 && len(a.Shape) == 0 && len(a.Data) == 8 {
		return appendPoolReal(dst, math.Float64frombits(binary.LittleEndian.Uint64(a.Data))), nil
	}
	if a.DType != F8 {
		return AppendJSON(dst, a, Int)
	}
	if err := a.Check(); err != nil {
		return nil, err
	}
	n := a.Len()
	flat := make([]byte, 0, n*8)
	for i := 0; i < n; i++ {
		flat = appendPoolReal(flat, math.Float64frombits(binary.LittleEndian.Uint64(a.Data[8*i:])))
		flat = append(flat, ',')
	}
	// Reuse AppendJSON's nesting on the rendered elements.
	return nest(dst, a.Shape, flat), nil
}

func appendPoolReal(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return ClientSpelling.Append(dst, f)
	}
	return AppendFloatText(dst, f)
}

// Scalar is a rank-0 f8 array: the one number f, at path.
func Scalar(path []any, f float64) Array {
	return Array{Path: path, DType: F8, Shape: []int{}, Data: binary.LittleEndian.AppendUint64(nil, math.Float64bits(f))}
}

// AppendFloatText writes f (finite) as the shortest JSON text that reads
// back as f and reads as a float: 2 is "2.0", 1e21 is "1e+21".
func AppendFloatText(dst []byte, f float64) []byte {
	start := len(dst)
	dst = AppendReal(dst, f)
	for _, c := range dst[start:] {
		if c == '.' || c == 'e' {
			return dst
		}
	}
	return append(dst, ".0"...)
}

// nest writes comma-terminated elements (flat) as nested lists of shape.
func nest(dst []byte, shape []int, flat []byte) []byte {
	pos := 0
	var walk func(level int)
	walk = func(level int) {
		dst = append(dst, '[')
		for i := 0; i < shape[level]; i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			if level < len(shape)-1 {
				walk(level + 1)
				continue
			}
			end := pos
			for flat[end] != ',' {
				end++
			}
			dst = append(dst, flat[pos:end]...)
			pos = end + 1
		}
		dst = append(dst, ']')
	}
	walk(0)
	return dst
}

// Place returns raw with text in place of the value at path (object keys
// and list indices), which must be null: how an array a pool does not take
// goes into its argument as JSON. raw is not modified.
func Place(raw []byte, path []any, text []byte) ([]byte, error) {
	start, end, err := find(raw, path)
	if err != nil {
		return nil, err
	}
	if string(raw[start:end]) != "null" {
		return nil, fmt.Errorf("path %s holds %.20s, not the null placeholder", pathString(path), raw[start:end])
	}
	out := make([]byte, 0, len(raw)-4+len(text))
	out = append(out, raw[:start]...)
	out = append(out, text...)
	return append(out, raw[end:]...), nil
}

// find returns the span of the value at path inside raw.
func find(raw []byte, path []any) (int, int, error) {
	start := jsontext.SkipSpace(raw, 0)
	end, err := jsontext.Value(raw, start)
	if err != nil {
		return 0, 0, err
	}
	for depth, p := range path {
		found := false
		switch key := p.(type) {
		case string:
			if start >= len(raw) || raw[start] != '{' {
				break
			}
			_, err = jsontext.Object(raw, start, func(k []byte, escaped bool, vs, ve int) error {
				name := string(k[1 : len(k)-1])
				if escaped {
					name = jsontext.Unquote(k)
				}
				if name == key && !found {
					start, end, found = vs, ve, true
				}
				return nil
			}, 1)
		case int:
			if start >= len(raw) || raw[start] != '[' {
				break
			}
			i := 0
			_, err = jsontext.Array(raw, start, func(vs, ve int) error {
				if i == key && !found {
					start, end, found = vs, ve, true
				}
				i++
				return nil
			})
		}
		if err != nil {
			return 0, 0, err
		}
		if !found {
			return 0, 0, fmt.Errorf("path %s: no %s at step %d", pathString(path), strconv.Quote(fmt.Sprint(p)), depth)
		}
	}
	return start, end, nil
}
