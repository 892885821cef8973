package reload

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// FileWatcher reports which of a set of files changed, file by file: the
// resources a client subscribed to (MCP resources/subscribe; docs/spec.md
// §6.1). As Watcher does, it watches the directories holding the files, so
// that a file replaced by a rename, or deleted and written again, is still
// seen; each burst of events on one file becomes one report, debounce after
// the last. A file deleted is a change too: onChange then finds it gone.
type FileWatcher struct {
	fs       *fsnotify.Watcher
	log      *slog.Logger
	debounce time.Duration
	onChange func(path string)

	mu     sync.Mutex
	files  map[string]int // absolute, cleaned → how many Add calls hold it
	dirs   map[string]int // being watched → how many files in it
	timers map[string]*time.Timer
	closed bool
	done   chan struct{}
}

// NewFileWatcher starts a watcher that calls onChange(path) (from its own
// goroutine) debounce after the last event on a watched file
// (DefaultDebounce when 0). It watches nothing until Add.
func NewFileWatcher(debounce time.Duration, log *slog.Logger, onChange func(path string)) (*FileWatcher, error) {
	if debounce <= 0 {
		debounce = DefaultDebounce
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	w := &FileWatcher{fs: fw, log: log, debounce: debounce, onChange: onChange,
		files: map[string]int{}, dirs: map[string]int{}, timers: map[string]*time.Timer{}, done: make(chan struct{})}
	go w.loop()
	return w, nil
}

// Add watches path (once more: each Add needs its Remove).
func (w *FileWatcher) Add(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("watch %s: %w", path, err)
	}
	dir := filepath.Dir(abs)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.files[abs] == 0 {
		if w.dirs[dir] == 0 {
			if err := w.fs.Add(dir); err != nil {
				return fmt.Errorf("watch %s: %w", dir, err)
			}
		}
		w.dirs[dir]++
	}
	w.files[abs]++
	return nil
}

// Remove undoes one Add of path.
func (w *FileWatcher) Remove(path string) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return
	}
	dir := filepath.Dir(abs)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.files[abs] == 0 {
		return
	}
	w.files[abs]--
	if w.files[abs] > 0 {
		return
	}
	delete(w.files, abs)
	if t := w.timers[abs]; t != nil {
		t.Stop()
		delete(w.timers, abs)
	}
	w.dirs[dir]--
	if w.dirs[dir] == 0 {
		delete(w.dirs, dir)
		w.fs.Remove(dir) // gone already, or not: either way no longer watched
	}
}

// Close stops watching; no onChange call starts after it returns.
func (w *FileWatcher) Close() error {
	w.mu.Lock()
	w.closed = true
	for _, t := range w.timers {
		t.Stop()
	}
	w.mu.Unlock()
	err := w.fs.Close()
	<-w.done
	return err
}

func (w *FileWatcher) loop() {
	readEvents(w.fs, w.done, w.log, "watching subscribed resources", func(ev fsnotify.Event) {
		w.poke(filepath.Clean(ev.Name))
	})
}

// poke (re)starts path's debounce timer, if path is watched.
func (w *FileWatcher) poke(path string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.files[path] == 0 {
		return
	}
	if t := w.timers[path]; t != nil {
		t.Stop()
	}
	var t *time.Timer
	t = time.AfterFunc(w.debounce, func() {
		w.mu.Lock()
		current := w.timers[path] == t // not stopped for a later event
		if current {
			delete(w.timers, path)
		}
		live := current && !w.closed && w.files[path] > 0
		w.mu.Unlock()
		if live {
			w.onChange(path)
		}
	})
	w.timers[path] = t
}
