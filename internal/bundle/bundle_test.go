package bundle

import (
	"archive/zip"
	"bytes"
	"debug/macho"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// program copies testdata/combat into a scratch directory, with the files
// a bundle must leave out beside it.
func program(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "combat")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "..", "testdata", "combat"))); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(filepath.Dir(dir), "secret.txt")
	for name, text := range map[string]string{
		".git/config":                "[core]",
		".env":                       "TOKEN=x",
		".env.local":                 "TOKEN=y",
		"certs/server.pem":           "-----BEGIN",
		"pools/py/__pycache__/p.pyc": "cache",
		"data/table.csv":             "a,b\n1,2\n",
		"old.mcpb":                   "zip",
		outside:                      "not the program's",
	} {
		p := filepath.Join(dir, name)
		if filepath.IsAbs(name) {
			p = name
		}
		write(t, p, text)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "data", "link-out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("table.csv", filepath.Join(dir, "data", "link-in")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func options(t *testing.T, dir string) Options {
	t.Helper()
	m, err := manifest.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable() // this test binary: an executable for the host
	if err != nil {
		t.Fatal(err)
	}
	return Options{Program: m, Tools: []Tool{{"rollAdv", "Roll"}, {"intro", "Intro"}},
		Platforms: []Platform{Host()}, Binaries: map[Platform]string{Host(): self},
		Author: "Ada Lovelace <ada@example.org>", NexusVersion: "test"}
}

func pack(t *testing.T, o Options) ([]byte, *Report) {
	t.Helper()
	var b bytes.Buffer
	rep, err := Write(&b, o)
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), rep
}

func TestBundleContentsAndReproducible(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("nexus bundles hold Linux and macOS binaries")
	}
	dir := program(t)
	o := options(t, dir)
	first, rep := pack(t, o)
	second, _ := pack(t, o)
	if !bytes.Equal(first, second) {
		t.Fatal("two bundles of the same inputs differ")
	}
	zr, err := zip.NewReader(bytes.NewReader(first), int64(len(first)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if !f.Modified.Equal(modTime) {
			t.Errorf("%s: time %v", f.Name, f.Modified)
		}
		if want := os.FileMode(0o644); f.Name == binaryName(Host()) && f.Mode().Perm() != 0o755 || f.Name != binaryName(Host()) && f.Mode().Perm() != want {
			t.Errorf("%s: mode %v", f.Name, f.Mode())
		}
	}
	if !sort.StringsAreSorted(names) {
		t.Errorf("entries not sorted: %v", names)
	}
	want := []string{binaryName(Host()), "manifest.json", "program/data/link-in", "program/data/table.csv",
		"program/manifest.json", "program/pools/py/pool.py", "program/pools/r/pool.R"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("entries:\n%v\nwant\n%v", names, want)
	}
	skipped := strings.Join(rep.Skipped, "\n")
	for _, s := range []string{".git: version control", ".env: looks like a secret", ".env.local: looks like a secret",
		"certs/server.pem: looks like a secret", "pools/py/__pycache__: a cache", "old.mcpb: a bundle",
		"data/link-out: a link to outside the program's directory"} {
		if !strings.Contains(skipped, s) {
			t.Errorf("report lacks %q:\n%s", s, skipped)
		}
	}
}

func TestBundleManifest(t *testing.T) {
	dir := program(t)
	o := options(t, dir)
	linux, darwin := Platform{"linux", "amd64"}, Platform{"darwin", "arm64"}
	o.Platforms = []Platform{linux, darwin}
	o.Binaries = map[Platform]string{linux: "linux", darwin: "darwin"}
	bins := map[string]string{"linux": binaryName(linux), "darwin": binaryName(darwin)}
	m, err := mcpbManifest(o.Program, o, &needs{python: true, r: true}, bins, []string{"linux", "darwin"})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(m, &doc); err != nil {
		t.Fatal(err)
	}
	get := func(path string) any {
		var v any = doc
		for _, k := range strings.Split(path, ".") {
			v = v.(map[string]any)[k]
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	for path, want := range map[string]string{
		"manifest_version":                     `"0.3"`,
		"name":                                 `"combat"`,
		"version":                              `"0.98.2"`,
		"author":                               `{"email":"ada@example.org","name":"Ada Lovelace"}`,
		"server.type":                          `"binary"`,
		"server.entry_point":                   `"bin/linux-amd64/nexus"`,
		"server.mcp_config.command":            `"${__dirname}/bin/linux-amd64/nexus"`,
		"server.mcp_config.args":               `["mcp","${__dirname}/program/manifest.json"]`,
		"server.mcp_config.env":                `{"PATH":"${user_config.environment}/bin:/opt/homebrew/bin:/usr/local/bin:/usr/bin:/bin"}`,
		"server.mcp_config.platform_overrides": `{"darwin":{"command":"${__dirname}/bin/darwin-arm64/nexus"},"linux":{"command":"${__dirname}/bin/linux-amd64/nexus"}}`,
		"compatibility.platforms":              `["darwin","linux"]`,
		"compatibility.runtimes":               `{"python":"\u003e=3.8"}`,
		"user_config.environment.type":         `"directory"`,
		"tools":                                `[{"description":"Roll","name":"rollAdv"},{"description":"Intro","name":"intro"}]`,
	} {
		if got := get(path); got != want {
			t.Errorf("%s = %s, want %s", path, got, want)
		}
	}
	if !strings.Contains(doc["long_description"].(string), "Rscript") {
		t.Errorf("long_description does not name Rscript: %s", doc["long_description"])
	}
	// Flags win over the manifest.
	o.Version, o.Author = "1.2.3", "Grace"
	m, _ = mcpbManifest(o.Program, o, &needs{}, bins, []string{"linux"})
	if !bytes.Contains(m, []byte(`"version": "1.2.3"`)) || !bytes.Contains(m, []byte(`"name": "Grace"`)) || bytes.Contains(m, []byte("user_config")) {
		t.Errorf("with --version, --author and no interpreter pool:\n%s", m)
	}
}

func TestBundleRefusals(t *testing.T) {
	dir := program(t)
	base := options(t, dir)
	self := base.Binaries[Host()]
	other := Platform{"darwin", "arm64"}
	if Host() == other {
		other = Platform{"linux", "amd64"}
	}
	png := filepath.Join(t.TempDir(), "icon.png")
	os.WriteFile(png, []byte("GIF89a"), 0o644)
	for _, tc := range []struct {
		name string
		edit func(o *Options)
		want string
	}{
		{"no author", func(o *Options) { o.Author = "" }, "--author"},
		{"bad email", func(o *Options) { o.Author = "Ada <not an email>" }, "expected \"Name\" or \"Name <email>\""},
		{"no binary", func(o *Options) { o.Platforms = append(o.Platforms, other) }, "no nexus binary for " + other.String() + ": give --binary"},
		{"wrong binary", func(o *Options) {
			o.Platforms = append(o.Platforms, other)
			o.Binaries[other] = self
		}, "is not a nexus binary for " + other.String()},
		{"not a binary", func(o *Options) { o.Binaries[Host()] = filepath.Join(dir, "manifest.json") }, "not an executable for Linux or macOS"},
		{"two of one OS", func(o *Options) {
			o.Platforms = []Platform{{"linux", "amd64"}, {"linux", "arm64"}}
		}, "bundle one Linux architecture"},
		{"icon", func(o *Options) { o.Icon = png }, "not a PNG"},
	} {
		o := base
		o.Binaries = map[Platform]string{Host(): self}
		o.Platforms = []Platform{Host()}
		tc.edit(&o)
		_, err := Write(&bytes.Buffer{}, o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// A compiled pool that does not run on a bundled platform is refused, by
// name, unless allowed.
func TestBundleCompiledPool(t *testing.T) {
	dir := program(t)
	o := options(t, dir)
	m := o.Program
	m.Pools = append(m.Pools, manifest.Pool{Lang: "cpp", Exec: []string{"pools/cpp/pool-cpp.out"}})
	if _, err := Write(&bytes.Buffer{}, o); err == nil || !strings.Contains(err.Error(), "pool 2 (cpp) pools/cpp/pool-cpp.out") || !strings.Contains(err.Error(), "not built?") {
		t.Fatalf("an unbuilt pool: %v", err)
	}
	// Built for this platform (any executable of it will do).
	exe, _ := os.ReadFile(o.Binaries[Host()])
	os.MkdirAll(filepath.Join(dir, "pools", "cpp"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "pools", "cpp", "pool-cpp.out"), exe, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(&bytes.Buffer{}, o); err != nil {
		t.Fatalf("a pool built for the host: %v", err)
	}
	other := Platform{"darwin", "arm64"}
	if Host() == other {
		other = Platform{"linux", "amd64"}
	}
	o.Platforms = append(o.Platforms, other)
	o.Binaries = map[Platform]string{Host(): o.Binaries[Host()], other: "unused"}
	o.Binaries[other] = o.Binaries[Host()]
	_, err := poolNeeds(m, &morlocRuntime{}, o, &Report{})
	if err == nil || !strings.Contains(err.Error(), "cannot run on "+other.String()) || !strings.Contains(err.Error(), "--allow-missing-pools") {
		t.Fatalf("a pool for the host in a bundle for %s too: %v", other, err)
	}
	o.AllowMissingPools = true
	rep := &Report{}
	if _, err := poolNeeds(m, &morlocRuntime{}, o, rep); err != nil || len(rep.Missing) != 1 {
		t.Fatalf("allowed: %v %v", err, rep.Missing)
	}
}

func TestParsePlatform(t *testing.T) {
	for s, want := range map[string]string{
		"darwin/arm64":  "",
		"linux/amd64":   "",
		"windows/amd64": "WSL",
		"linux":         "expected OS/ARCH",
		"freebsd/amd64": "darwin or linux",
		"linux/386":     "amd64 or arm64",
	} {
		_, err := ParsePlatform(s)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("ParsePlatform(%s): %v, want %q", s, err, want)
		}
	}
	for in, want := range map[string]string{"combat": "combat", "rollAdv": "roll-adv", "My_Tools 2": "my-tools-2"} {
		if got := packageName(in); got != want {
			t.Errorf("packageName(%s) = %s, want %s", in, got, want)
		}
	}
}

// thinMachO is the smallest Mach-O executable header debug/macho reads.
func thinMachO(cpu macho.Cpu, sub uint32) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, []uint32{macho.Magic64, uint32(cpu), sub, uint32(macho.TypeExec), 0, 0, 0, 0})
	return append(b.Bytes(), "slice"...)
}

// Two macOS architectures become one universal binary, which Go's Mach-O
// reader (as macOS's loader) sees as both, each slice intact and aligned.
func TestUniversal(t *testing.T) {
	dir := t.TempDir()
	arm, amd := filepath.Join(dir, "arm64"), filepath.Join(dir, "amd64")
	os.WriteFile(arm, thinMachO(macho.CpuArm64, 0), 0o755)
	os.WriteFile(amd, thinMachO(macho.CpuAmd64, 3), 0o755)
	fat, err := universal([]string{arm, amd})
	if err != nil {
		t.Fatal(err)
	}
	ff, err := macho.NewFatFile(bytes.NewReader(fat))
	if err != nil {
		t.Fatal(err)
	}
	if len(ff.Arches) != 2 || ff.Arches[0].Cpu != macho.CpuAmd64 || ff.Arches[1].Cpu != macho.CpuArm64 || ff.Arches[0].SubCpu != 3 {
		t.Fatalf("arches %+v", ff.Arches)
	}
	for _, a := range ff.Arches {
		if a.Offset%(1<<fatAlign) != 0 || !bytes.HasSuffix(fat[a.Offset:a.Offset+a.Size], []byte("slice")) {
			t.Errorf("slice %v at %d, size %d", a.Cpu, a.Offset, a.Size)
		}
	}
	fatPath := filepath.Join(dir, "fat")
	os.WriteFile(fatPath, fat, 0o755)
	runs, err := platformsOf(fatPath)
	if err != nil || !runs[Platform{"darwin", "arm64"}] || !runs[Platform{"darwin", "amd64"}] {
		t.Fatalf("platformsOf(universal) = %v, %v", runs, err)
	}
	// In a bundle for both: one binary, no overrides.
	o := options(t, program(t))
	o.Platforms = []Platform{{"darwin", "arm64"}, {"darwin", "amd64"}}
	o.Binaries = map[Platform]string{o.Platforms[0]: arm, o.Platforms[1]: amd}
	var b bytes.Buffer
	if _, err := Write(&b, o); err != nil {
		t.Fatal(err)
	}
	zr, _ := zip.NewReader(bytes.NewReader(b.Bytes()), int64(b.Len()))
	for _, f := range zr.File {
		if f.Name == "manifest.json" {
			rc, _ := f.Open()
			doc, _ := io.ReadAll(rc)
			if !bytes.Contains(doc, []byte(`"command": "${__dirname}/bin/darwin-universal/nexus"`)) || bytes.Contains(doc, []byte("platform_overrides")) {
				t.Errorf("manifest:\n%s", doc)
			}
		}
		if strings.HasPrefix(f.Name, "bin/") && f.Name != "bin/darwin-universal/nexus" {
			t.Errorf("entry %s beside the universal binary", f.Name)
		}
	}
}
