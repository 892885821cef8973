package argmap

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/jsontext"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// readNumericFile reads what the in-memory fast path (fastEncoder.array)
// reads, into the same array, whatever the pieces cut; and declines what
// that path declines.
func TestReadNumericFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var reals, ints, matrix, spaced bytes.Buffer
	reals.WriteByte('[')
	ints.WriteByte('[')
	spaced.WriteString(" \n[ ")
	for i := range 40_000 { // ~800 KB: several pieces, numbers cut at their edges
		if i > 0 {
			reals.WriteByte(',')
			ints.WriteByte(',')
			spaced.WriteString(" ,\n\t")
		}
		reals.WriteString(strconv.FormatFloat(rng.NormFloat64()*1e3, 'g', -1, 64))
		ints.WriteString(strconv.Itoa(rng.IntN(2_000_000_000) - 1_000_000_000))
		spaced.WriteString(strconv.FormatFloat(float64(i)*0.5, 'e', -1, 64))
	}
	reals.WriteByte(']')
	ints.WriteByte(']')
	spaced.WriteString(" ]\n")
	matrix.WriteByte('[')
	for r := range 300 {
		if r > 0 {
			matrix.WriteByte(',')
		}
		matrix.WriteByte('[')
		for c := range 300 {
			if c > 0 {
				matrix.WriteByte(',')
			}
			matrix.WriteString(strconv.FormatFloat(rng.Float64(), 'g', -1, 64))
		}
		matrix.WriteByte(']')
	}
	matrix.WriteByte(']')
	ty := func(s string) *manifest.Type {
		tt, err := manifest.ParseType(s)
		if err != nil {
			t.Fatal(err)
		}
		return tt
	}
	dir := t.TempDir()
	open := func(text string) *os.File {
		p := filepath.Join(dir, "arg.json")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	for _, c := range []struct {
		name, text, schema string
	}{
		{"reals", reals.String(), "af8"},
		{"reals as ints", ints.String(), "af8"},
		{"ints i4", ints.String(), "ai4"},
		{"ints i8", ints.String(), "ai8"},
		{"spaced", spaced.String(), "af8"},
		{"matrix", matrix.String(), "aaf8"},
		{"fixed matrix", matrix.String(), "a:300a:300f8"},
		{"empty", "[]", "af8"},
		{"empty rows", "[[],[]]", "aaf8"},
	} {
		tt := ty(c.schema)
		want := &fastEncoder{b: []byte(c.text), arrayMin: 1, path: []ndarray.Step{{Idx: 3}}}
		_, wantOK, _ := want.array(tt, jsontext.SkipSpace(want.b, 0))
		got, ok, err := readNumericFile(open(c.text), tt, 3)
		if err != nil || !ok {
			t.Errorf("%s: ok %v, %v", c.name, ok, err)
			continue
		}
		if !wantOK {
			// The in-memory path counts too few for an array (an empty
			// list): the streamed one still gives the empty array.
			if len(got.Data) != 0 {
				t.Errorf("%s: %d bytes for an empty list", c.name, len(got.Data))
			}
			continue
		}
		w := want.arrays[0]
		if got.DType != w.DType || !slices.Equal(got.Shape, w.Shape) || !bytes.Equal(got.Data, w.Data) || len(got.Path) != 1 || got.Path[0] != 3 {
			t.Errorf("%s: %s %v (%d bytes) at %v, want %s %v (%d bytes)", c.name, got.DType, got.Shape, len(got.Data), got.Path, w.DType, w.Shape, len(w.Data))
		}
	}
	for _, c := range []struct {
		name, text, schema string
	}{
		{"a string", `[1,"NaN",2]`, "af8"},
		{"ragged", `[[1,2],[3]]`, "aaf8"},
		{"too deep", `[[1]]`, "af8"},
		{"not deep enough", `[1,2]`, "aaf8"},
		{"after the value", `[1,2] 3`, "af8"},
		{"two values", `[1][2]`, "af8"},
		{"truncated", `[1,2`, "af8"},
		{"truncated number", `[1,2.`, "af8"},
		{"trailing comma", `[1,2,]`, "af8"},
		{"out of i4", `[1,2147483648]`, "ai4"},
		{"a fraction for an Int", `[1,2.5]`, "ai4"},
		{"fixed length", `[1,2,3]`, "a:2f8"},
		{"an object", `[{"a":1}]`, "af8"},
		{"true", `[true]`, "af8"},
		{"nothing", ``, "af8"},
	} {
		got, ok, err := readNumericFile(open(c.text), ty(c.schema), 0)
		if ok || err != nil {
			t.Errorf("%s: took %q as %v %v (%v)", c.name, c.text, got.Shape, got.DType, err)
		}
	}
}

// A large argument file goes to the pool as an array read a piece at a
// time; one that is not a plain list is read whole and judged as ever.
func TestCLIStreamedFile(t *testing.T) {
	m := manifestOf(t, remote("echo", "af8", pos("af8", ``), ``))
	var b strings.Builder
	b.WriteByte('[')
	n := 0
	for b.Len() < streamFileMin+1000 {
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(float64(n)+0.125, 'g', -1, 64))
		n++
	}
	b.WriteByte(']')
	dir := t.TempDir()
	p := filepath.Join(dir, "big.json")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	call, err := CLICall(m, m.Command("echo"), []string{p})
	if err != nil || joinArgs(call.Args) != `[null]` || len(call.Arrays) != 1 || call.Arrays[0].Shape[0] != n {
		t.Fatalf("%s: %.60s, %d arrays, %v", p, joinArgs(call.Args), len(call.Arrays), err)
	}
	js, err := call.JSONArgs()
	if err != nil || string(js[0]) != b.String() {
		t.Fatalf("the array as JSON differs from the file (%v)", err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(b.String()[:b.Len()-1]+`,"x"]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := CLICall(m, m.Command("echo"), []string{bad}); err == nil || !strings.Contains(err.Error(), "expected") {
		t.Fatalf("a string in a list of Reals: %v", err)
	}
}
