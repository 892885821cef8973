package manifest

import (
	"strings"
	"testing"
	"time"
)

func TestParseTimeout(t *testing.T) {
	tests := []struct {
		raw     string // "" for absent
		want    time.Duration
		wantErr bool
	}{
		{"", 0, false},
		{`null`, 0, false},
		{`"2s"`, 2 * time.Second, false},
		{`"1m30s"`, 90 * time.Second, false},
		{`2.5`, 2500 * time.Millisecond, false},
		{`30`, 30 * time.Second, false},
		{`0`, NoTimeout, false},
		{`"0s"`, NoTimeout, false},
		{`"-1s"`, 0, true},
		{`-3`, 0, true},
		{`"soon"`, 0, true},
		{`true`, 0, true},
		{`1e300`, 0, true},
	}
	for _, tt := range tests {
		var raw []byte
		if tt.raw != "" {
			raw = []byte(tt.raw)
		}
		got, err := parseTimeout(raw)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("%s: %v, %v; want %v (error: %v)", tt.raw, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParseWorkers(t *testing.T) {
	for raw, want := range map[string]int{"": 0, "null": 0, "1": 1, "4": 4, "256": 256} {
		var b []byte
		if raw != "" {
			b = []byte(raw)
		}
		if got, err := parseWorkers(b); err != nil || got != want {
			t.Errorf("workers %q: %d, %v; want %d", raw, got, err, want)
		}
	}
	for _, bad := range []string{`0`, `-1`, `2.5`, `"3"`, `true`, `100000`} {
		if _, err := parseWorkers([]byte(bad)); err == nil || !strings.Contains(err.Error(), "expected an integer from 1 to 256, got "+bad) {
			t.Errorf("workers %s: %v, want a range error quoting the value", bad, err)
		}
	}
}

// The settings are read at load, and a bad one is refused with its JSON path.
func TestSettingsAtLoad(t *testing.T) {
	const good = `{"name":"p","pools":[{"lang":"r","exec":["Rscript","pool.R"],"metadata":{"workers":3,"arrays":"numpy","runtime":"nexus"}}],
	 "commands":[{"name":"slow","type":"remote","mid":1,"pool":0,"args":[],"return":{"schema":"j"},"metadata":{"timeout":"90s"}}]}`
	m, err := Parse("/p/manifest.json", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if m.Pools[0].Workers != 3 || m.Commands[0].Timeout != 90*time.Second || m.Pools[0].Arrays != "numpy" || m.Pools[0].Runtime != RuntimeNexus {
		t.Errorf("workers %d timeout %v arrays %q runtime %q, want 3, 90s, numpy and nexus",
			m.Pools[0].Workers, m.Commands[0].Timeout, m.Pools[0].Arrays, m.Pools[0].Runtime)
	}
	for _, tt := range []struct{ from, to, want string }{
		{`"workers":3`, `"workers":0`, "manifest /p/manifest.json: at pools[0].metadata.workers: expected an integer from 1 to 256, got 0"},
		{`"arrays":"numpy"`, `"arrays":"torch"`, `manifest /p/manifest.json: at pools[0].metadata.arrays: expected "numpy", got "torch"`},
		{`"runtime":"nexus"`, `"runtime":"python"`, `manifest /p/manifest.json: at pools[0].metadata.runtime: expected "nexus" (a pool written against nexus's runtime) or "morloc" (a pool morloc compiled, the default), got "python"`},
		{`"runtime":"nexus"`, `"runtime":true`, `manifest /p/manifest.json: at pools[0].metadata.runtime: expected "nexus"`},
		{`"timeout":"90s"`, `"timeout":"soon"`, "manifest /p/manifest.json: at commands[0].metadata.timeout: expected a duration"},
	} {
		_, err := Parse("/p/manifest.json", []byte(strings.Replace(good, tt.from, tt.to, 1)))
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.to, err, tt.want)
		}
	}
}

// The driver rule (docs/spec.md §2.2): a pool is nexus's only when its
// metadata says so; no key, null, or "morloc" is a pool morloc compiled.
func TestRuntimeRule(t *testing.T) {
	for _, tt := range []struct{ metadata, want string }{
		{`{"runtime":"nexus"}`, RuntimeNexus},
		{`{"runtime":"nexus","workers":2}`, RuntimeNexus},
		{`{"runtime":"morloc"}`, RuntimeMorloc},
		{`{"runtime":null}`, RuntimeMorloc},
		{`{}`, RuntimeMorloc},
		{`null`, RuntimeMorloc},
	} {
		m, err := Parse("/p/manifest.json", []byte(`{"name":"p","pools":[{"lang":"py","exec":["python3","pool.py"],"metadata":`+tt.metadata+`}],"commands":[]}`))
		if err != nil {
			t.Fatalf("%s: %v", tt.metadata, err)
		}
		if got := m.Pools[0].Runtime; got != tt.want {
			t.Errorf("metadata %s: Runtime %q, want %q", tt.metadata, got, tt.want)
		}
	}
	// A pool written without metadata at all is morloc's too.
	m, err := Parse("/p/manifest.json", []byte(`{"name":"p","pools":[{"lang":"py","exec":["python3","pool.py"]}],"commands":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Pools[0].Runtime != RuntimeMorloc {
		t.Errorf("no metadata: Runtime %q, want morloc", m.Pools[0].Runtime)
	}
	if h := RuntimeHint(RuntimeMorloc); !strings.Contains(h, `"metadata": {"runtime": "nexus"}`) {
		t.Errorf("morloc hint %q does not say how to pick nexus's runtime", h)
	}
	if h := RuntimeHint(RuntimeNexus); !strings.Contains(h, "remove that key") {
		t.Errorf("nexus hint %q does not say how to pick morloc's runtime", h)
	}
	if h := RuntimeHint("other"); h != "" {
		t.Errorf("hint for an unknown runtime: %q", h)
	}
}
