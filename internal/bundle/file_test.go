package bundle

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestParseBinary(t *testing.T) {
	abs, _ := filepath.Abs("nexus-darwin")
	for _, tc := range []struct{ in, platform, path, err string }{
		{"darwin/arm64=nexus-darwin", "darwin/arm64", abs, ""},
		{"linux/amd64=/opt/nexus", "linux/amd64", "/opt/nexus", ""},
		{"darwin/arm64", "", "", "expected OS/ARCH=PATH"},
		{"darwin/arm64=", "", "", "expected OS/ARCH=PATH"},
		{"windows/amd64=x", "", "", "WSL"},
	} {
		p, path, err := ParseBinary(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseBinary(%s): %v, want %q", tc.in, err, tc.err)
			}
		case err != nil || p.String() != tc.platform || path != tc.path:
			t.Errorf("ParseBinary(%s) = %s, %s, %v; want %s, %s", tc.in, p, path, err, tc.platform, tc.path)
		}
	}
}

func TestChoosePlatforms(t *testing.T) {
	host := Platform{"linux", "amd64"}
	bins := map[Platform]string{host: "self", {"darwin", "arm64"}: "a", {"darwin", "amd64"}: "b"}
	for _, tc := range []struct {
		asked []string
		want  string
	}{
		{nil, "linux/amd64 darwin/amd64 darwin/arm64"},
		{[]string{"darwin/arm64", "linux/amd64"}, "darwin/arm64 linux/amd64"},
		{[]string{"plan9/amd64"}, "--platform: "},
	} {
		ps, err := ChoosePlatforms(tc.asked, host, bins)
		var got []string
		for _, p := range ps {
			got = append(got, p.String())
		}
		if err != nil {
			got = []string{err.Error()}
		}
		if s := strings.Join(got, " "); !strings.HasPrefix(s, tc.want) {
			t.Errorf("ChoosePlatforms(%v) = %s, want %s", tc.asked, s, tc.want)
		}
	}
}

// WriteFile writes into the program's own directory without packing the
// bundle into itself, and a failed bundle leaves no file behind.
func TestWriteFile(t *testing.T) {
	dir := program(t)
	o := options(t, dir)
	out := filepath.Join(dir, "combat.mcpb")
	rep, err := WriteFile(out, o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Path != out {
		t.Errorf("Path %s, want %s", rep.Path, out)
	}
	again, err := WriteFile(out, o) // the first bundle is now in the directory
	if err != nil {
		t.Fatal(err)
	}
	if again.Files != rep.Files {
		t.Errorf("bundled again: %d program files, first %d", again.Files, rep.Files)
	}
	st, err := os.Stat(out)
	if err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("%s: %v %v", out, st, err)
	}
	notes := strings.Join(again.Notes(o), "\n")
	for _, s := range []string{"left out .env: looks like a secret", "wrote " + out + ": 2 tools, " + strconv.Itoa(rep.Files) + " program files, nexus for " + Host().String()} {
		if !strings.Contains(notes, s) {
			t.Errorf("notes lack %q:\n%s", s, notes)
		}
	}
	o.Author = ""
	bad := filepath.Join(t.TempDir(), "bad.mcpb")
	if _, err := WriteFile(bad, o); err == nil {
		t.Fatal("a bundle without an author was written")
	}
	if left, _ := os.ReadDir(filepath.Dir(bad)); len(left) != 0 {
		t.Errorf("a failed bundle left %v", left)
	}
}
