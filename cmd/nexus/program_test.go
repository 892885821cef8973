package main

import (
	"encoding/json"
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

func TestCommandTimeout(t *testing.T) {
	tests := []struct {
		metadata string
		want     time.Duration // -1: none
		wantErr  bool
	}{
		{`{}`, 0, false},
		{`{"timeout": null}`, 0, false},
		{`{"timeout": "2s"}`, 2 * time.Second, false},
		{`{"timeout": "1m30s"}`, 90 * time.Second, false},
		{`{"timeout": 2.5}`, 2500 * time.Millisecond, false},
		{`{"timeout": 30}`, 30 * time.Second, false},
		{`{"timeout": 0}`, -1, false},
		{`{"timeout": "0s"}`, -1, false},
		{`{"timeout": "-1s"}`, 0, true},
		{`{"timeout": -3}`, 0, true},
		{`{"timeout": "soon"}`, 0, true},
		{`{"timeout": true}`, 0, true},
		{`{"timeout": 1e300}`, 0, true},
	}
	for _, tt := range tests {
		c := &manifest.Command{Name: "slow", Type: manifest.Remote}
		if err := json.Unmarshal([]byte(tt.metadata), &c.Metadata); err != nil {
			t.Fatal(err)
		}
		got, err := commandTimeout(c)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("%s: %v, %v; want %v (error: %v)", tt.metadata, got, err, tt.want, tt.wantErr)
		}
		m := &manifest.Manifest{Path: "/p/manifest.json", Commands: []manifest.Command{*c}}
		if err := checkSettings(m); tt.wantErr != (err != nil) || (err != nil && !strings.HasPrefix(err.Error(), "/p/manifest.json: commands[0] (slow): metadata.timeout must be")) {
			t.Errorf("%s: checkSettings: %v", tt.metadata, err)
		}
	}
}

func TestPoolFunctions(t *testing.T) {
	m := &manifest.Manifest{
		Pools: []manifest.Pool{{Lang: "py"}, {Lang: "r"}},
		Commands: []manifest.Command{
			{Name: "a", Type: manifest.Remote, Pool: 0, Mid: 3},
			{Name: "b", Type: manifest.Remote, Pool: 1, Mid: 3, Metadata: map[string]json.RawMessage{"timeout": json.RawMessage(`"2s"`)}},
			{Name: "mlcp_a_upper", Type: manifest.Remote, Pool: 0, Mid: 4, Internal: true, Metadata: map[string]json.RawMessage{"timeout": json.RawMessage(`0`)}},
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
