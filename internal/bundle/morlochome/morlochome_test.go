package morlochome

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnv(t *testing.T) {
	with := t.TempDir()
	if err := os.MkdirAll(filepath.Join(with, Dir, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	without := t.TempDir()
	lib := filepath.Join(with, Dir, "lib")
	name := libraryPathVar()
	for _, tc := range []struct {
		name string
		dir  string
		env  []string
		want string // the variable's value the child sees; "" when unset
	}{
		{"no bundled home", without, []string{"PATH=/bin"}, ""},
		{"no bundled home, the caller's kept", without, []string{name + "=/opt/lib"}, "/opt/lib"},
		{"bundled home", with, []string{"PATH=/bin"}, lib},
		{"bundled home before the caller's", with, []string{name + "=/opt/lib"}, lib + ":/opt/lib"},
		{"the last of two values", with, []string{name + "=/a", name + "=/b"}, lib + ":/b"},
		{"an empty value", with, []string{name + "="}, lib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := Env(tc.dir, append([]string(nil), tc.env...))
			got := ""
			for _, kv := range env { // as os/exec does, the last one wins
				if v, ok := strings.CutPrefix(kv, name+"="); ok {
					got = v
				}
			}
			if got != tc.want {
				t.Errorf("%s = %q, want %q (env %q)", name, got, tc.want, env)
			}
		})
	}
}

// A relative program directory gives an absolute library path: the pools
// run in that directory, where the relative one would name another.
func TestEnvAbsolute(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "prog", Dir, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	env := Env("prog", nil)
	if len(env) != 1 || !strings.HasPrefix(env[0], libraryPathVar()+"="+dir) {
		t.Errorf("Env(prog) = %q, want an absolute path under %s", env, dir)
	}
}
