package program

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/pool"
)

func TestPoolSpecsWorkers(t *testing.T) {
	tests := []struct {
		name     string
		metadata int // the pool's metadata.workers as manifest parsed it (0: unset)
		flag     int // --workers
		want     int // Spec.Workers; 0 lets the pool package pick the language's default
	}{
		{"neither", 0, 0, 0},
		{"flag only", 0, 3, 3},
		{"metadata only", 2, 0, 2},
		{"metadata beats the flag", 2, 5, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &manifest.Manifest{Dir: "/prog", Pools: []manifest.Pool{{Lang: "r", Exec: []string{"Rscript", "pool.R"}, Workers: tt.metadata}}}
			specs := poolSpecs(m, &Options{Workers: tt.flag}, nil)
			if len(specs) != 1 || specs[0].Workers != tt.want {
				t.Fatalf("specs %+v, want one with Workers %d", specs, tt.want)
			}
		})
	}
}

func TestPoolFunctions(t *testing.T) {
	m := &manifest.Manifest{
		Pools: []manifest.Pool{{Lang: "py"}, {Lang: "r"}},
		Commands: []manifest.Command{
			{Name: "a", Type: manifest.Remote, Pool: 0, Mid: 3},
			{Name: "b", Type: manifest.Remote, Pool: 1, Mid: 3, Timeout: 2 * time.Second},
			{Name: "mlcp_a_upper", Type: manifest.Remote, Pool: 0, Mid: 4, Internal: true, Timeout: manifest.NoTimeout},
			{Name: "answer", Type: manifest.Pure},
		},
	}
	specs := poolSpecs(m, &Options{}, nil)
	want := []map[int]pool.Function{
		{3: {Name: "a"}, 4: {Name: "mlcp_a_upper", Timeout: -1}},
		{3: {Name: "b", Timeout: 2 * time.Second}},
	}
	for i, w := range want {
		if !reflect.DeepEqual(specs[i].Functions, w) {
			t.Errorf("pool %d functions %v, want %v", i, specs[i].Functions, w)
		}
	}
}

// A launcher morloc 0.69 wrote gives morloc pools: their socket, the
// schemas and needed pools of their functions, and the program's wire
// version; a pool of nexus's runtime stays one.
func TestPoolSpecsMorloc(t *testing.T) {
	m, err := manifest.Load(filepath.Join("..", "..", "internal", "manifest", "testdata", "launchers", "v0.69-cross", "nexus"))
	if err != nil {
		t.Fatal(err)
	}
	specs := poolSpecs(m, &Options{}, nil)
	if len(specs) != 3 {
		t.Fatalf("%d specs, want 3", len(specs))
	}
	type fn struct {
		name, args, ret string
		needs           []int
	}
	wantFns := map[int]map[int]fn{
		0: {1: {"report", "<character>s", "<character>s", []int{0, 1, 2}}},
		2: {2: {"spread", "<list>a<float>f8", "<float>f8", []int{2, 1}}},
	}
	for i, s := range specs {
		if s.Runtime != pool.RuntimeMorloc || s.Socket != m.Pools[i].Socket || s.Socket == "" {
			t.Errorf("pool %d: runtime %q socket %q, want morloc and %q", i, s.Runtime, s.Socket, m.Pools[i].Socket)
		}
		got := map[int]fn{}
		for mid, f := range s.Functions {
			var args []string
			for _, a := range f.Args {
				args = append(args, a.String())
			}
			got[mid] = fn{f.Name, strings.Join(args, ","), f.Return.String(), f.Needs}
		}
		if want := wantFns[i]; len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
			t.Errorf("pool %d functions %+v, want %+v", i, got, want)
		}
	}
	// Its recorded build directory is not on this machine (unless it
	// happens to be): the pools say so.
	if _, statErr := os.Stat(m.Dir); statErr != nil {
		for i, s := range specs {
			if s.DirErr == nil || !strings.Contains(s.DirErr.Error(), "run `morloc make` again") {
				t.Errorf("pool %d: DirErr %v, want the moved-program error", i, s.DirErr)
			}
		}
	}
	if o := morlocOptions(m); o.WireVersion != "0.69.0" || o.InlineSize != nil || o.NoShm || o.TmpDir != "" {
		t.Errorf("morloc options %+v, want wire version 0.69.0 and nothing else", o)
	}

	size := int64(1 << 20)
	m98 := &manifest.Manifest{Build: manifest.Build{MorlocVersion: "0.98.2"}, InlineSize: &size, NoShm: true, TmpDir: "/scratch",
		Pools: []manifest.Pool{{Lang: "py", Socket: "pipe-py", PoolHash: "abc", Runtime: manifest.RuntimeMorloc}, {Lang: "r", Runtime: manifest.RuntimeNexus}}}
	specs = poolSpecs(m98, &Options{}, nil)
	if s := specs[0]; s.Runtime != pool.RuntimeMorloc || s.PoolHash != "abc" || s.Socket != "pipe-py" {
		t.Errorf("0.98 pool spec %+v", s)
	}
	if s := specs[1]; s.Runtime != pool.RuntimeNexus {
		t.Errorf("nexus pool spec %+v", s)
	}
	if o := morlocOptions(m98); o.WireVersion != "0.98.2" || o.InlineSize == nil || *o.InlineSize != size || !o.NoShm || o.TmpDir != "/scratch" {
		t.Errorf("0.98 morloc options %+v", o)
	}
}
