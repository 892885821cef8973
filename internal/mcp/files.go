package mcp

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// Files that functions write (docs/spec.md §6.1): a command whose metadata
// says "result": "file" returns the path of a file it wrote. nexus serves
// the file as a resource under a URI it makes,
// nexus://<program>/files/<path in the program's directory> or
// nexus://<program>/output/<path in nexus's output directory>, answers the
// call with a resource_link to it, and lists it in resources/list from then
// on. Only files below the program's own directory (or its pools' working
// directory) or below nexus's output directory are served: the path is
// checked when the function returns it and again, symbolic links resolved,
// each time the file is read.

// producedFile is a file a function returned.
type producedFile struct {
	uri, name, mimeType, path string
	// roots are the directories the file must stay below.
	roots []string
}

// fileStore holds the files functions returned, by URI, in the order they
// first appeared; a file returned again keeps its URI.
type fileStore struct {
	mu    sync.Mutex
	byURI map[string]*producedFile
	order []*producedFile
}

func newFileStore() *fileStore { return &fileStore{byURI: map[string]*producedFile{}} }

// add records f and reports whether its URI is new.
func (fs *fileStore) add(f *producedFile) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if old := fs.byURI[f.uri]; old != nil {
		*old = *f // the same file (its URI says where it is), perhaps another type
		return false
	}
	fs.byURI[f.uri] = f
	fs.order = append(fs.order, f)
	return true
}

func (fs *fileStore) get(uri string) *producedFile {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.byURI[uri]
}

// list returns the files in order.
func (fs *fileStore) list() []*producedFile {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	out := make([]*producedFile, len(fs.order))
	for i, f := range fs.order {
		c := *f
		out[i] = &c
	}
	return out
}

// fileFrom checks the path a file-result command returned (relative paths
// are the pool's, so relative to its working directory) and makes its
// resource.
func (s *Server) fileFrom(src *fileSource, returned string) (*producedFile, error) {
	if returned == "" {
		return nil, fmt.Errorf("it returned an empty path, where its metadata says its result is a file")
	}
	path := returned
	if !filepath.IsAbs(path) {
		path = filepath.Join(src.workDir, path)
	}
	path = filepath.Clean(path)
	type root struct{ dir, kind string }
	var roots []root
	for _, d := range src.dirs {
		roots = append(roots, root{d, "files"})
	}
	if s.opts.OutputDir != "" {
		// The output directory first: it may lie below the program's.
		roots = append([]root{{s.opts.OutputDir, "output"}}, roots...)
	}
	real, err := regularFile(path)
	if err != nil {
		return nil, fmt.Errorf("it returned the path %s, but %v", returned, err)
	}
	var allowed []string
	for _, r := range roots {
		dir, err := filepath.EvalSymlinks(r.dir)
		if err != nil {
			continue
		}
		allowed = append(allowed, r.dir)
		if !manifest.Within(dir, real) {
			continue
		}
		rel, _ := filepath.Rel(dir, real)
		segs := strings.Split(filepath.ToSlash(rel), "/")
		for i, sg := range segs {
			segs[i] = url.PathEscape(sg)
		}
		mime := src.mimeType
		if mime == "" {
			mime = manifest.MimeTypeOf(real)
		}
		return &producedFile{
			uri:      "nexus://" + url.PathEscape(src.program) + "/" + r.kind + "/" + strings.Join(segs, "/"),
			name:     filepath.Base(real),
			mimeType: mime,
			path:     real,
			roots:    []string{r.dir},
		}, nil
	}
	return nil, fmt.Errorf("it returned the path %s, which is outside the directories nexus serves files from (%s)", returned, strings.Join(allowed, ", "))
}

// regularFile resolves path's symbolic links and checks it is a regular
// file.
func regularFile(path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		if os.IsNotExist(err) {
			return "", fmt.Errorf("there is no such file")
		}
		return "", err
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("it is not a regular file")
	}
	return real, nil
}

// contents is one item of a resources/read result (MCP TextResourceContents
// or BlobResourceContents).
type contents struct {
	URI      string  `json:"uri"`
	MimeType string  `json:"mimeType,omitempty"`
	Text     *string `json:"text,omitempty"`
	Blob     *string `json:"blob,omitempty"`
}

// bytesContents is data as resource contents: text when its type is
// textual and it is UTF-8, else a base64 blob.
func bytesContents(uri, mime string, data []byte) contents {
	c := contents{URI: uri, MimeType: mime}
	if textual(mime) && utf8.Valid(data) {
		t := string(data)
		c.Text = &t
	} else {
		b := base64.StdEncoding.EncodeToString(data)
		c.Blob = &b
	}
	return c
}

// textual reports whether a MIME type names text: text/*, JSON, XML,
// YAML and their kin.
func textual(mime string) bool {
	mime, _, _ = strings.Cut(mime, ";")
	mime = strings.TrimSpace(strings.ToLower(mime))
	major, minor, _ := strings.Cut(mime, "/")
	switch {
	case major == "text":
		return true
	case major != "application":
		return false
	case strings.HasSuffix(minor, "+json"), strings.HasSuffix(minor, "+xml"):
		return true
	}
	switch minor {
	case "json", "xml", "javascript", "yaml", "x-yaml", "toml", "x-sh", "sql", "graphql", "ld+json":
		return true
	}
	return false
}

// readFileIn reads path for a resource, first checking again that it is
// a regular file below one of roots (none: any).
func readFileIn(path string, roots []string) ([]byte, error) {
	real, err := regularFile(path)
	if err != nil {
		return nil, fmt.Errorf("its file %s: %v", path, err)
	}
	if len(roots) > 0 {
		inside := false
		for _, r := range roots {
			if dir, err := filepath.EvalSymlinks(r); err == nil && manifest.Within(dir, real) {
				inside = true
			}
		}
		if !inside {
			return nil, fmt.Errorf("its file %s now leads outside %s (a symbolic link?): nexus no longer serves it", path, strings.Join(roots, ", "))
		}
	}
	data, err := os.ReadFile(real)
	if err != nil {
		return nil, fmt.Errorf("its file %s: %v", path, err)
	}
	return data, nil
}
