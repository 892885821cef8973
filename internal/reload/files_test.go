package reload

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A FileWatcher reports each watched file that changes, once per burst,
// deletion and re-creation included; a sibling that is not watched, or a
// file no longer watched, is never reported.
func TestFileWatcher(t *testing.T) {
	dir := t.TempDir()
	a, b, other := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt"), filepath.Join(dir, "other.txt")
	for _, f := range []string{a, b, other} {
		if err := os.WriteFile(f, []byte("0"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	changed := make(chan string, 32)
	w, err := NewFileWatcher(40*time.Millisecond, slog.New(slog.NewTextHandler(io.Discard, nil)), func(p string) { changed <- p })
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, f := range []string{a, b, a} { // a twice: it needs two Removes
		if err := w.Add(f); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(what string, want ...string) {
		t.Helper()
		var got []string
		deadline := time.After(500 * time.Millisecond)
	collect:
		for {
			select {
			case p := <-changed:
				got = append(got, p)
			case <-deadline:
				break collect
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%s: reported %v, want %v", what, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: reported %v, want %v", what, got, want)
			}
		}
	}
	for i := range 5 { // a burst of writes is one report
		if err := os.WriteFile(a, []byte{byte('1' + i)}, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	expect("a burst on a", a)
	if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	expect("a file not watched")
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	expect("b deleted", b)
	if err := os.WriteFile(b, []byte("back"), 0o644); err != nil {
		t.Fatal(err)
	}
	expect("b written again", b)
	w.Remove(a)
	if err := os.WriteFile(a, []byte("still watched once"), 0o644); err != nil {
		t.Fatal(err)
	}
	expect("a after one of its two Removes", a)
	w.Remove(a)
	if err := os.WriteFile(a, []byte("unwatched"), 0o644); err != nil {
		t.Fatal(err)
	}
	expect("a after both Removes")
}
