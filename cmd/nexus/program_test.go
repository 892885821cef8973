package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

func TestPoolSpecsWorkers(t *testing.T) {
	tests := []struct {
		name     string
		metadata string // the pool's metadata object
		flag     int    // --workers
		want     int    // Spec.Workers; 0 lets the pool package pick the language's default
	}{
		{"neither", `{}`, 0, 0},
		{"flag only", `{}`, 3, 3},
		{"metadata only", `{"workers": 2}`, 0, 2},
		{"metadata beats the flag", `{"workers": 2}`, 5, 2},
		{"null metadata is unset", `{"workers": null}`, 4, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &manifest.Manifest{Dir: "/prog", Pools: []manifest.Pool{{Lang: "r", Exec: []string{"Rscript", "pool.R"}}}}
			if err := json.Unmarshal([]byte(tt.metadata), &m.Pools[0].Metadata); err != nil {
				t.Fatal(err)
			}
			if err := checkSettings(m); err != nil {
				t.Fatalf("checkSettings: %v", err)
			}
			specs := poolSpecs(m, &globalFlags{workers: tt.flag}, nil)
			if len(specs) != 1 || specs[0].Workers != tt.want {
				t.Fatalf("specs %+v, want one with Workers %d", specs, tt.want)
			}
		})
	}
}

func TestCheckSettingsRefusesBadWorkers(t *testing.T) {
	for _, bad := range []string{`0`, `-1`, `2.5`, `"3"`, `true`, `100000`} {
		m := &manifest.Manifest{Path: "/prog/manifest.json", Pools: []manifest.Pool{
			{Lang: "py"},
			{Lang: "r", Metadata: map[string]json.RawMessage{"workers": json.RawMessage(bad)}},
		}}
		err := checkSettings(m)
		if err == nil || !strings.Contains(err.Error(), "/prog/manifest.json: pools[1] (r): metadata.workers must be an integer from 1 to 256, got "+bad) {
			t.Errorf("workers %s: %v, want an error naming the pool and the value", bad, err)
		}
	}
}
