// Package reload notices when the files a served program is built from
// change on disk, for nexus --watch (docs/spec.md §6.4): the manifest and
// the pool files it names. Editors and compilers replace a file by writing
// a new one and renaming it over the old, so the directories holding the
// files are watched (fsnotify), not the files themselves, and a burst of
// events becomes one change, a debounce interval after the last. What a
// change leads to (loading the program again, swapping it in) is the
// caller's: internal/program (reload.go).
package reload

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// DefaultDebounce is how long after the last event a change is reported:
// long enough for a compiler writing several files, or an editor's
// write-and-rename, to finish; short enough to feel immediate.
const DefaultDebounce = 250 * time.Millisecond

// Watcher reports changes to a set of files.
type Watcher struct {
	fs       *fsnotify.Watcher
	log      *slog.Logger
	debounce *debouncer

	mu    sync.Mutex
	files map[string]bool // absolute, cleaned
	dirs  map[string]bool // being watched
	done  chan struct{}
}

// New starts a watcher that reports changes debounce after the last event
// (DefaultDebounce when 0). It watches nothing until Watch.
func New(debounce time.Duration, log *slog.Logger) (*Watcher, error) {
	if debounce <= 0 {
		debounce = DefaultDebounce
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	w := &Watcher{fs: fw, log: log, debounce: newDebouncer(debounce), files: map[string]bool{}, dirs: map[string]bool{}, done: make(chan struct{})}
	go w.loop()
	return w, nil
}

// Watch makes files the set watched, replacing the last one.
func (w *Watcher) Watch(files []string) error {
	want := map[string]bool{}
	dirs := map[string]bool{}
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return fmt.Errorf("watch %s: %w", f, err)
		}
		want[abs] = true
		dirs[filepath.Dir(abs)] = true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var errs []string
	for d := range dirs {
		if w.dirs[d] {
			continue
		}
		if err := w.fs.Add(d); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", d, err))
			continue
		}
		w.dirs[d] = true
	}
	for d := range w.dirs {
		if !dirs[d] {
			w.fs.Remove(d) // gone already, or not: either way no longer watched
			delete(w.dirs, d)
		}
	}
	w.files = want
	if len(errs) > 0 {
		slices.Sort(errs)
		return fmt.Errorf("watch: cannot watch %s", strings.Join(errs, "; "))
	}
	return nil
}

// Changes receives one value per burst of changes to the watched files.
func (w *Watcher) Changes() <-chan struct{} { return w.debounce.out }

// Close stops watching.
func (w *Watcher) Close() error {
	err := w.fs.Close()
	<-w.done
	w.debounce.stop()
	return err
}

func (w *Watcher) loop() {
	readEvents(w.fs, w.done, w.log, "watching the program's files", func(ev fsnotify.Event) {
		if w.relevant(ev) {
			w.log.Debug("watched file changed", "file", ev.Name, "op", ev.Op.String())
			w.debounce.poke()
		}
	})
}

// readEvents hands each of fs's events to onEvent, but a change of mode or
// times alone (a touch, a chmod: the contents are the same), and logs its
// errors, saying what it was watching, until fs is closed; then it closes
// done.
func readEvents(fs *fsnotify.Watcher, done chan<- struct{}, log *slog.Logger, what string, onEvent func(fsnotify.Event)) {
	defer close(done)
	for {
		select {
		case ev, ok := <-fs.Events:
			if !ok {
				return
			}
			if ev.Op != fsnotify.Chmod {
				onEvent(ev)
			}
		case err, ok := <-fs.Errors:
			if !ok {
				return
			}
			log.Warn(what, "err", err)
		}
	}
}

// relevant reports whether an event (a write, a creation or a rename onto
// a file, its removal) is about a watched file.
func (w *Watcher) relevant(ev fsnotify.Event) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.files[filepath.Clean(ev.Name)]
}

// debouncer turns pokes into one value on out, after after has passed
// with no further poke. out holds one value: changes not yet taken merge.
type debouncer struct {
	after time.Duration
	out   chan struct{}

	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

func newDebouncer(after time.Duration) *debouncer {
	return &debouncer{after: after, out: make(chan struct{}, 1)}
}

func (d *debouncer) poke() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return
	}
	if d.timer != nil {
		d.timer.Stop()
	}
	d.timer = time.AfterFunc(d.after, d.fire)
}

func (d *debouncer) fire() {
	select {
	case d.out <- struct{}{}:
	default: // one is waiting already
	}
}

func (d *debouncer) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopped = true
	if d.timer != nil {
		d.timer.Stop()
	}
}

// ProgramFiles lists the files a program is built from, to watch: its
// manifest, and each pool's files its exec names (a script, a compiled
// pool), found relative to the manifest's directory as the pool's start
// finds them. Interpreters looked up in PATH (python3) are not the
// program's and are left out, as is what does not exist.
func ProgramFiles(m *manifest.Manifest) []string {
	files := []string{m.Path}
	for _, p := range m.Pools {
		for _, arg := range p.Exec {
			if arg == "" || strings.HasPrefix(arg, "-") {
				continue
			}
			path := arg
			if !filepath.IsAbs(path) {
				path = filepath.Join(m.Dir, path)
			}
			if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && !slices.Contains(files, path) {
				files = append(files, path)
			}
		}
	}
	return files
}

// Digest sums the contents of files (a missing one counts as missing), so
// that a burst of events that leaves them as they were (a save without
// edits, a rebuild that wrote the same bytes) need not reload.
func Digest(files []string) string {
	h := sha256.New()
	for _, f := range files {
		io.WriteString(h, f+"\x00")
		fh, err := os.Open(f)
		if err != nil {
			io.WriteString(h, "missing\x00")
			continue
		}
		_, err = io.Copy(h, fh)
		fh.Close()
		if err != nil {
			io.WriteString(h, "unreadable\x00")
		}
		io.WriteString(h, "\x00")
	}
	return hex.EncodeToString(h.Sum(nil))
}
