package morlocwire

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// A case of testdata/v0.69/<lang>/cases.json, captured from a real 0.69.0
// pool by testdata/v0.69/capture (see testdata/v0.69/README.md).
type goldenCase struct {
	Name string          `json:"name"`
	Cmd  string          `json:"cmd"`
	Args []string        `json:"args"`
	Want json.RawMessage `json:"want"`
	Fail string          `json:"fail"`
	// SameAs: the result is the one of <SameAs>/<Name>.want.json.
	SameAs string `json:"same_as"`
}

// goldenManifest is the part of a 0.69 launcher's version-1 manifest the
// tests need (testdata/v0.69/<lang>/manifest.json, copied from the
// launcher after its "### MANIFEST ###" line).
type goldenManifest struct {
	Commands []struct {
		Name         string   `json:"name"`
		Mid          uint32   `json:"mid"`
		ArgSchemas   []string `json:"arg_schemas"`
		ReturnSchema string   `json:"return_schema"`
	} `json:"commands"`
}

func loadGolden(t *testing.T, dir string) (goldenManifest, []goldenCase) {
	t.Helper()
	var m goldenManifest
	var cases []goldenCase
	for file, v := range map[string]any{"manifest.json": &m, "cases.json": &cases} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s/%s: %v", dir, file, err)
		}
	}
	return m, cases
}

// unpackVolumes writes a case's captured shared-memory volumes into a
// directory, as morloc's file-backed fallback would hold them, and returns
// the directory and the basename to open them with.
func unpackVolumes(t *testing.T, dir string) (string, string) {
	t.Helper()
	out := t.TempDir()
	basename := "morloc-golden-" + filepath.Base(out) // never in /dev/shm: read from the fallback
	for i := 0; ; i++ {
		f, err := os.Open(filepath.Join(dir, strconv.Itoa(i)+".gz"))
		if errors.Is(err, os.ErrNotExist) {
			if i == 0 {
				t.Fatalf("%s holds no volumes", dir)
			}
			return out, basename
		}
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(zr)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, VolumeName(basename, i)), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGolden069 decodes every result packet captured from real 0.69.0
// Python, C++ and R pools and compares it with what morloc's own nexus
// printed for the same call (numbers and strings in nexus's forms), and
// checks that the arguments encode to the very bytes the pool accepted.
func TestGolden069(t *testing.T) {
	for _, lang := range []string{"py", "cpp", "r"} {
		t.Run(lang, func(t *testing.T) {
			dir := filepath.Join("testdata", "v0.69", lang)
			if _, err := os.Stat(dir); err != nil {
				t.Fatalf("no fixtures for %s: %v", lang, err)
			}
			m, cases := loadGolden(t, dir)
			for _, c := range cases {
				t.Run(c.Name, func(t *testing.T) { checkGolden069(t, dir, m, c) })
			}
		})
	}
}

func checkGolden069(t *testing.T, dir string, m goldenManifest, c goldenCase) {
	base := filepath.Join(dir, c.Name)
	var mid uint32
	var argSchemas []string
	var ret string
	for _, cmd := range m.Commands {
		if cmd.Name == c.Cmd {
			mid, argSchemas, ret = cmd.Mid, cmd.ArgSchemas, cmd.ReturnSchema
		}
	}
	if ret == "" {
		t.Fatalf("no command %s in the manifest", c.Cmd)
	}
	// The arguments: the same bytes the real pool accepted.
	var args []byte
	for k, a := range c.Args {
		at, err := manifest.ParseType(argSchemas[k])
		if err != nil {
			t.Fatal(err)
		}
		if args, err = AppendArg(args, at, json.RawMessage(a), C); err != nil {
			t.Fatalf("argument %d: %v", k, err)
		}
	}
	call, err := os.ReadFile(base + ".call")
	if err != nil {
		t.Fatal(err)
	}
	if got := CallPacket(mid, args); !bytes.Equal(got, call) {
		t.Errorf("call packet\n got %x\nwant %x", got, call)
	}

	raw, err := os.ReadFile(base + ".packet")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ReadPacket(bytes.NewReader(raw), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := manifest.ParseType(ret)
	if err != nil {
		t.Fatal(err)
	}
	var mem *Memory
	if p.Header.Source() == SourceRptr {
		vols, basename := unpackVolumes(t, base+".shm")
		mem = OpenMemory(basename, vols, C)
		defer mem.Close()
	}
	got, err := p.Result(rt, C, mem)
	if c.Fail != "" {
		var f *Failure
		if !errors.As(err, &f) || !strings.Contains(f.Message, c.Fail) {
			t.Fatalf("got %s, %v; want a failure saying %q", got, err, c.Fail)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	// A hand-written want is exact; one printed by morloc's own nexus has
	// its reals to 15 digits (1.6179999999999999 comes out as 1.618), so
	// those are compared as numbers.
	want := []byte(c.Want)
	same := bytes.Equal
	if want == nil {
		wantFile := base + ".want.json"
		if c.SameAs != "" {
			wantFile = filepath.Join(dir, "..", c.SameAs, c.Name+".want.json")
		}
		if want, err = os.ReadFile(wantFile); err != nil {
			t.Fatal(err)
		}
		same = sameJSON
	}
	want = bytes.TrimSpace(want)
	if !same(got, want) {
		t.Errorf("result\n got %.300s\nwant %.300s", got, want)
	}
	// Value gives the same numbers, as an array when the result is a list of them.
	v, err := p.Value(rt, C, mem)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Arrays) > 0 {
		if string(v.JSON) != "null" || len(v.Arrays) != 1 {
			t.Fatalf("Value: %s with %d arrays", v.JSON, len(v.Arrays))
		}
		kind := ndarray.Int
		if rt.Elem.Kind == manifest.Float {
			kind = ndarray.Real
		}
		text, err := ndarray.AppendJSONSpelled(nil, &v.Arrays[0], kind, ndarray.ClientSpelling)
		if err != nil || !same(text, want) {
			t.Errorf("Value's array as JSON\n got %.300s (%v)\nwant %.300s", text, err, want)
		}
	} else if !same(v.JSON, want) {
		t.Errorf("Value\n got %.300s\nwant %.300s", v.JSON, want)
	}
}

// sameJSON reports whether a and b hold the same JSON tokens in the same
// order, reals equal to 14 significant digits.
func sameJSON(a, b []byte) bool {
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	for {
		ta, ea := da.Token()
		tb, eb := db.Token()
		if ea == io.EOF || eb == io.EOF {
			return ea == eb
		}
		if ea != nil || eb != nil {
			return false
		}
		na, aNum := ta.(json.Number)
		nb, bNum := tb.(json.Number)
		if aNum != bNum {
			return false
		}
		if !aNum {
			if ta != tb {
				return false
			}
			continue
		}
		if na == nb {
			continue
		}
		fa, err1 := na.Float64()
		fb, err2 := nb.Float64()
		if err1 != nil || err2 != nil || math.Abs(fa-fb) > 1e-14*math.Max(math.Abs(fa), math.Abs(fb)) {
			return false
		}
	}
}
