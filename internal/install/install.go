// Package install owns `nexus install` and `nexus uninstall`: it reads a
// client's config file, has clientconfig merge the program's entry into it
// (or take it out), and writes the result safely: a backup beside the file,
// a write that replaces the file whole or not at all, nothing written when
// nothing changes, a read-only or unparsable file left untouched with an
// error that names it. It also finds which clients a machine has, and
// tells the user what it did and what is left to do (Command).
package install

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nexus-mcp/nexus/internal/clientconfig"
)

// BackupSuffix names the copy of a config file kept before nexus changes
// it: the file as it was before the last change nexus made.
const BackupSuffix = ".nexus-backup"

// Request is one install or uninstall.
type Request struct {
	Client *clientconfig.Client
	Scope  string // "" for the client's default
	Server clientconfig.Stdio
	Force  bool
}

// Plan is an edit of one file, computed and not yet written.
type Plan struct {
	Path   string
	Before []byte // nil when the file does not exist
	After  []byte
	Change clientconfig.Change
	mode   fs.FileMode
	exists bool
}

// Changed reports whether applying the plan writes anything.
func (p *Plan) Changed() bool {
	return !bytes.Equal(p.Before, p.After) || !p.exists && len(p.After) > 0
}

// Install plans adding the request's server to its client's file.
func Install(l clientconfig.Locator, r Request) (*Plan, error) {
	return plan(l, r, func(src []byte) ([]byte, clientconfig.Change, error) {
		return r.Client.Add(src, r.Server, r.Force)
	})
}

// Uninstall plans removing the server named r.Server.Name; only nexus's
// entry for r.Server.Manifest ("": any nexus entry) unless r.Force.
func Uninstall(l clientconfig.Locator, r Request) (*Plan, error) {
	return plan(l, r, func(src []byte) ([]byte, clientconfig.Change, error) {
		return r.Client.Remove(src, r.Server.Name, r.Server.Manifest, r.Force)
	})
}

func plan(l clientconfig.Locator, r Request, edit func([]byte) ([]byte, clientconfig.Change, error)) (*Plan, error) {
	path, err := r.Client.Path(r.Scope, l)
	if err != nil {
		return nil, err
	}
	// A config file kept elsewhere and linked (dotfile managers do this)
	// is edited where it is, and stays linked.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	p := &Plan{Path: path, mode: 0o644}
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return nil, fmt.Errorf("%s: %s is a directory, not a config file", r.Client.Title, path)
	case err == nil:
		p.exists, p.mode = true, st.Mode().Perm()
		if p.Before, err = os.ReadFile(path); err != nil {
			return nil, fmt.Errorf("%s: %w", r.Client.Title, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: %w", r.Client.Title, err)
	}
	after, change, err := edit(p.Before)
	if err != nil {
		if errors.Is(err, clientconfig.ErrParse) {
			return nil, fmt.Errorf("%s config %s: %w; the file is left as it is: fix it, or move it away to start a new one", r.Client.Title, path, err)
		}
		return nil, fmt.Errorf("%s config %s: %w", r.Client.Title, path, err)
	}
	p.After, p.Change = after, change
	if p.Changed() && p.exists && p.mode&0o200 == 0 {
		return nil, fmt.Errorf("%s config %s is read-only (mode %04o): nexus does not change a file its owner made read-only; make it writable (chmod u+w) and run again", r.Client.Title, path, p.mode)
	}
	return p, nil
}

// Apply writes the plan: the old file to path+BackupSuffix, then the new
// text through a temporary file renamed over the old one, so that a reader
// (the client itself) sees the old file or the new one, never half of one.
// An unchanged plan writes nothing. If the file changed since the plan read
// it (a client that was running rewrote it), nothing is written.
func (p *Plan) Apply() error {
	if !p.Changed() {
		return nil
	}
	now, err := os.ReadFile(p.Path)
	switch {
	case err == nil && !bytes.Equal(now, p.Before), err != nil && p.exists, err == nil && !p.exists:
		return fmt.Errorf("%s changed while nexus was editing it (is the client running and writing it?): nothing written; run again", p.Path)
	}
	dir := filepath.Dir(p.Path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	if p.exists {
		if err := os.WriteFile(p.Path+BackupSuffix, p.Before, p.mode); err != nil {
			return fmt.Errorf("writing the backup of %s: %w", p.Path, err)
		}
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(p.Path)+".nexus-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", p.Path, err)
	}
	defer os.Remove(tmp.Name()) // gone after the rename; removes it after a failure
	if _, err := tmp.Write(p.After); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", p.Path, err)
	}
	if err := tmp.Chmod(p.mode); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", p.Path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", p.Path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", p.Path, err)
	}
	if err := os.Rename(tmp.Name(), p.Path); err != nil {
		return fmt.Errorf("writing %s: %w", p.Path, err)
	}
	return nil
}
