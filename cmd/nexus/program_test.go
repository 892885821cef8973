package main

import (
	"reflect"
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
			specs := poolSpecs(m, &globalFlags{workers: tt.flag}, nil)
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
	specs := poolSpecs(m, &globalFlags{}, nil)
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
