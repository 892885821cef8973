package reload

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// count takes what d reports within d's interval plus slack.
func count(out <-chan struct{}, within time.Duration) int {
	n := 0
	deadline := time.After(within)
	for {
		select {
		case <-out:
			n++
		case <-deadline:
			return n
		}
	}
}

// A burst of pokes closer together than the interval is one change,
// reported an interval after the last; bursts further apart are two.
func TestDebounce(t *testing.T) {
	const after = 60 * time.Millisecond
	tests := []struct {
		name  string
		gaps  []time.Duration // between pokes
		want  int
		early bool // whether anything may come before the last poke + after
	}{
		{"one poke", nil, 1, false},
		{"a burst", []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond}, 1, false},
		{"two bursts", []time.Duration{5 * time.Millisecond, 3 * after}, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The debouncer is judged on the pokes as they came: on a loaded
			// machine a gap meant to be short may stretch past the interval
			// and such a run shows nothing; it is run again.
			for try := 1; !debounceRun(t, after, tt.gaps, tt.want, tt.early); try++ {
				if try == 5 {
					t.Fatalf("in 5 runs the pokes never came as fast as scheduled (gaps under %v)", after*3/4)
				}
				t.Logf("run %d: a gap meant to be short took %v or more; running again", try, after*3/4)
			}
		})
	}
}

// debounceRun pokes a debouncer with the gaps between pokes and checks
// what it reports. It returns false, having checked nothing, when a gap
// shorter than the interval took three quarters of it or more.
func debounceRun(t *testing.T, after time.Duration, gaps []time.Duration, want int, early bool) bool {
	t.Helper()
	d := newDebouncer(after)
	defer d.stop()
	// A poke happened between the times taken around it: its timer starts
	// after before, and the gap since the previous poke is at most
	// done - the previous before.
	before := time.Now()
	d.poke()
	got := 0
	for _, gap := range gaps {
		got += count(d.out, gap)
		prev := before
		before = time.Now()
		d.poke()
		if gap < after && time.Since(prev) >= after*3/4 {
			return false
		}
	}
	last := before
	if got > 0 && !early {
		t.Fatalf("%d change(s) reported during the burst", got)
	}
	select {
	case <-d.out:
		got++
		if waited := time.Since(last); waited < after*9/10 {
			t.Errorf("reported %v after the last poke, want about %v", waited, after)
		}
	case <-time.After(max(10*after, 10*time.Second)):
		t.Fatal("no change reported")
	}
	got += count(d.out, 3*after)
	if got != want {
		t.Errorf("%d changes reported, want %d", got, want)
	}
	return true
}

// The watcher reports changes to the watched files however they are made,
// and nothing for a touch or for another file in the same directory.
func TestWatcher(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "manifest.json")
	other := filepath.Join(dir, "notes.txt")
	write := func(path, text string) func() error {
		return func() error { return os.WriteFile(path, []byte(text), 0o644) }
	}
	tests := []struct {
		name   string
		change func() error
		want   int
	}{
		{"written in place", write(file, "v2"), 1},
		{"replaced by rename", func() error {
			tmp := filepath.Join(dir, ".manifest.json.tmp")
			if err := os.WriteFile(tmp, []byte("v3"), 0o644); err != nil {
				return err
			}
			return os.Rename(tmp, file)
		}, 1},
		{"removed and written again", func() error {
			if err := os.Remove(file); err != nil {
				return err
			}
			return os.WriteFile(file, []byte("v4"), 0o644)
		}, 1},
		{"touched", func() error { now := time.Now(); return os.Chtimes(file, now, now) }, 0},
		{"chmod", func() error { return os.Chmod(file, 0o600) }, 0},
		{"another file", write(other, "x"), 0},
	}
	if err := os.WriteFile(file, []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := watching(t, 50*time.Millisecond, file)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.change(); err != nil {
				t.Fatal(err)
			}
			if got := count(w.Changes(), 250*time.Millisecond); got != tt.want {
				t.Errorf("%d changes reported, want %d", got, tt.want)
			}
		})
	}
}

// watching is a Watcher on files, closed when the test ends.
func watching(t *testing.T, debounce time.Duration, files ...string) *Watcher {
	t.Helper()
	w, err := New(debounce, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if err := w.Watch(files); err != nil {
		t.Fatal(err)
	}
	return w
}

// Watch replaces the set: a file no longer watched reports nothing.
func TestWatchReplacesSet(t *testing.T) {
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	w := watching(t, 30*time.Millisecond, a)
	if err := w.Watch([]string{b}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(a, []byte("x"), 0o644)
	if got := count(w.Changes(), 300*time.Millisecond); got != 0 {
		t.Errorf("a file no longer watched reported %d change(s)", got)
	}
	os.WriteFile(b, []byte("x"), 0o644)
	if got := count(w.Changes(), 300*time.Millisecond); got != 1 {
		t.Errorf("the watched file reported %d change(s), want 1", got)
	}
	if err := w.Watch([]string{filepath.Join(t.TempDir(), "gone", "x")}); err == nil {
		t.Error("watching a file in a missing directory did not fail")
	}
}

func TestProgramFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"pools/py/pool.py", "pool.R", "pool-cpp.out"} {
		p := filepath.Join(dir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o755)
	}
	m, err := manifest.Parse(filepath.Join(dir, "manifest.json"), []byte(`{"name":"p","pools":[
	  {"lang":"py","exec":["python3","-u","pools/py/pool.py"],"metadata":{"runtime":"nexus"}},
	  {"lang":"r","exec":["Rscript","pool.R"],"metadata":{"runtime":"nexus"}},
	  {"lang":"cpp","exec":["./pool-cpp.out"],"metadata":{"runtime":"nexus"}},
	  {"lang":"py","exec":["python3","pools/py/missing.py"],"metadata":{"runtime":"nexus"}}],"commands":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := ProgramFiles(m)
	want := []string{filepath.Join(dir, "manifest.json"), filepath.Join(dir, "pools/py/pool.py"), filepath.Join(dir, "pool.R"), filepath.Join(dir, "pool-cpp.out")}
	if !slices.Equal(got, want) {
		t.Errorf("ProgramFiles = %q, want %q", got, want)
	}
}

func TestDigest(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("one"), 0o644)
	os.WriteFile(b, []byte("two"), 0o644)
	before := Digest([]string{a, b})
	tests := []struct {
		name   string
		change func()
		same   bool
	}{
		{"rewritten with the same bytes", func() { os.WriteFile(a, []byte("one"), 0o644) }, true},
		{"edited", func() { os.WriteFile(a, []byte("ONE"), 0o644) }, false},
		{"removed", func() { os.Remove(b) }, false},
	}
	for _, tt := range tests {
		tt.change()
		if got := Digest([]string{a, b}) == before; got != tt.same {
			t.Errorf("%s: digest unchanged %v, want %v", tt.name, got, tt.same)
		}
	}
}
