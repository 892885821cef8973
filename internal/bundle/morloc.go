package bundle

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/nexus-mcp/nexus/internal/bundle/morlochome"
	"github.com/nexus-mcp/nexus/internal/manifest"
)

// A program morloc compiled loads morloc's runtime at run time from
// morloc's home on the machine that built it (~/.local/share/morloc, or
// $MORLOC_HOME), by absolute paths written into its pools: a Python pool
// puts <home>/opt on sys.path and imports pymorloc, an R pool dyn.loads
// <home>/lib/librmorloc.so, a compiled pool links libmorloc.so with a run
// path into <home>/lib. The bundle carries those files, found from the
// pools themselves rather than from a list, in program/morloc-home (laid
// out as the home is), and rewrites the home's paths in the pools'
// sources, in the bundle's copy only, to that directory relative to the
// program's, where nexus runs every pool. The loader finds the libraries
// there through morlochome.Env. docs/bundles.md says which files each
// morloc version's pools load.

// morlocRuntime is what a program's pools load from a morloc home.
type morlocRuntime struct {
	home  string            // the builder's morloc home; "" when the pools load nothing from one
	files map[string]string // path in the home (slash-separated) → the file to pack
	elf   map[string]bool   // which of files are executables or libraries
	edits map[string][]byte // path in the program's directory → its source, the home's paths made relative
	seen  map[string]bool   // files whose dependencies were followed
	// unfound says which parts of morloc's runtime the pools load are
	// not on this machine, so the bundle cannot carry them.
	unfound []string
}

// systemPrefixes are never taken for a morloc home, even when their lib
// holds libmorloc.so: a bundle does not carry a system's files.
var systemPrefixes = map[string]bool{"/": true, "/usr": true, "/usr/local": true, "/opt": true}

// findMorlocRuntime reads the program's pools: their sources' string
// literals that name a path in a morloc home (and what Python imports or R
// sources from such a directory), and the libraries their executables and
// those files link from it.
func findMorlocRuntime(m *manifest.Manifest) (*morlocRuntime, error) {
	rt := &morlocRuntime{files: map[string]string{}, elf: map[string]bool{}, edits: map[string][]byte{}, seen: map[string]bool{}}
	dir := filepath.Clean(m.Dir)
	for i, p := range m.Pools {
		for _, arg := range p.Exec {
			if !strings.ContainsRune(arg, '/') {
				continue // an interpreter on PATH
			}
			file := arg
			if !filepath.IsAbs(file) {
				file = filepath.Join(dir, file)
			}
			st, err := os.Stat(file)
			if err != nil || !st.Mode().IsRegular() || !within(dir, file) {
				continue // a compiled pool not built is poolNeeds' to report
			}
			if isBinary(file) {
				if err := rt.followLinks(file); err != nil {
					return nil, fmt.Errorf("pool %d (%s) %s: %w", i, p.Lang, arg, err)
				}
				continue
			}
			rel, _ := filepath.Rel(dir, file)
			if err := rt.readSource(dir, filepath.ToSlash(rel), file, p.Lang); err != nil {
				return nil, fmt.Errorf("pool %d (%s) %s: %w", i, p.Lang, arg, err)
			}
		}
	}
	return rt, nil
}

// lazyRegexp is a regular expression compiled when first used: only
// making a bundle needs bundle's, and compiling them at package
// initialisation cost every nexus start, a one-shot CLI call included.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// literal is a quoted string in a source: its content's byte span.
type literal struct{ start, end int }

// quoted finds the one-line string literals of Python and R sources.
var quoted = lazyRegexp(`"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'`)

// readSource finds what the pool source at file (rel in the program's
// directory dir) loads from a morloc home, and keeps a copy of it with the
// home's paths rewritten.
func (rt *morlocRuntime) readSource(dir, rel, file, lang string) error {
	src, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if bytes.IndexByte(src, 0) >= 0 {
		return nil // not a source
	}
	var out bytes.Buffer
	var search []string
	last := 0
	for _, loc := range quoted().FindAllIndex(src, -1) {
		lit := literal{loc[0] + 1, loc[1] - 1}
		p, ok := expandPath(string(src[lit.start:lit.end]))
		if !ok {
			continue
		}
		var to string
		if within(dir, p) {
			// The program's own directory, as a pool of morloc 0.78 to
			// 0.96 may name it: where nexus runs the pool.
			in, _ := filepath.Rel(dir, p)
			to = filepath.ToSlash(in)
		} else if ok, err := rt.claim(p); err != nil {
			return err
		} else if !ok {
			if looksLikeMorlocHome(p) {
				if _, err := os.Stat(p); err != nil {
					rt.unfound = append(rt.unfound, fmt.Sprintf("%s names %s, which is not on this machine", rel, p))
				}
			}
			continue
		} else {
			in, _ := filepath.Rel(rt.home, p)
			to = path.Join(morlochome.Dir, filepath.ToSlash(in))
			st, err := os.Stat(p)
			switch {
			case err != nil && filepath.Ext(p) != "":
				rt.unfound = append(rt.unfound, fmt.Sprintf("%s names %s, which is not on this machine", rel, p))
			case err != nil:
				// A directory the home lacks (an empty module library): nothing to carry.
			case st.IsDir():
				search = append(search, p)
			default:
				if err := rt.add(p); err != nil {
					return err
				}
			}
		}
		out.Write(src[last:lit.start])
		out.WriteString(to)
		last = lit.end
	}
	if last == 0 { // no literal names the home or the program's directory
		return nil
	}
	out.Write(src[last:])
	rt.edits[rel] = out.Bytes()
	switch lang {
	case "py":
		for _, name := range pythonImports(src) {
			if len(pythonModule(dir, name)) > 0 {
				continue // the program's own module
			}
			for _, d := range search {
				if files := pythonModule(d, name); len(files) > 0 {
					for _, f := range files {
						if err := rt.add(f); err != nil {
							return err
						}
					}
					break
				}
			}
		}
	case "r":
		for _, name := range rSources(src) {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				continue
			}
			for _, d := range search {
				if f := filepath.Join(d, name); isFile(f) {
					if err := rt.add(f); err != nil {
						return err
					}
					break
				}
			}
		}
	}
	return nil
}

// expandPath is the literal s as a path, when it is one that names a
// place on this machine: absolute, or from ~ as Python and R expand it
// for the builder.
func expandPath(s string) (string, bool) {
	switch {
	case strings.HasPrefix(s, "~/"):
		h, err := os.UserHomeDir()
		if err != nil {
			return "", false
		}
		s = filepath.Join(h, s[2:])
	case !filepath.IsAbs(s):
		return "", false
	}
	return filepath.Clean(s), true
}

// claim reports whether p lies in the program's morloc home, the first
// home a pool names being the program's: pools that load morloc's
// runtime from two homes are refused, since a bundle carries one.
func (rt *morlocRuntime) claim(p string) (bool, error) {
	if rt.home != "" && within(rt.home, p) {
		return true, nil
	}
	h := homeOf(p)
	switch {
	case h == "":
		return false, nil
	case rt.home == "":
		rt.home = h
		return true, nil
	}
	return false, fmt.Errorf("the pools load morloc's runtime from two homes, %s and %s (%s): a bundle carries one; compile the program again with one morloc", rt.home, h, p)
}

// homeOf is the morloc home p lies in: the nearest directory above or at p
// whose lib holds libmorloc.so, the library every pool of every morloc
// version loads; "" when there is none.
func homeOf(p string) string {
	for d := p; ; d = filepath.Dir(d) {
		if systemPrefixes[d] {
			return ""
		}
		if isFile(filepath.Join(d, "lib", "libmorloc.so")) || isFile(filepath.Join(d, "lib", "libmorloc.dylib")) {
			return d
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// add carries the home's file p, and what it links from the home.
func (rt *morlocRuntime) add(p string) error {
	rel, err := filepath.Rel(rt.home, p)
	if err != nil || !within(rt.home, p) {
		return fmt.Errorf("%s is not in morloc's home %s", p, rt.home)
	}
	rel = filepath.ToSlash(rel)
	if _, ok := rt.files[rel]; ok {
		return nil
	}
	rt.files[rel] = p
	if isBinary(p) {
		rt.elf[rel] = true
		return rt.followLinks(p)
	}
	return nil
}

// followLinks carries the shared libraries the executable or library p
// links that its loader finds in the morloc home; the system's are the
// user's machine's.
func (rt *morlocRuntime) followLinks(p string) error {
	if rt.seen[p] {
		return nil
	}
	rt.seen[p] = true
	needed, dirs, err := linkedLibraries(p)
	if err != nil {
		return err
	}
	for _, n := range needed {
		found := false
		for _, d := range dirs {
			f := filepath.Join(d, n)
			if !isFile(f) {
				continue
			}
			found = true
			ok, err := rt.claim(f)
			if err != nil {
				return err
			}
			if ok {
				if err := rt.add(f); err != nil {
					return err
				}
			}
			break // the loader takes the first it finds
		}
		if !found && isMorlocLibrary(n) && !inSystemLibraries(n) {
			rt.unfound = append(rt.unfound, fmt.Sprintf("%s needs %s, which neither its run path (%s) nor the system's libraries hold on this machine", p, n, strings.Join(dirs, ":")))
		}
	}
	return nil
}

// morlocLibrary matches the names of morloc's runtime libraries
// (libmorloc, librmorloc, libcppmorloc).
var morlocLibrary = lazyRegexp(`^lib(r|cpp)?morloc\.`)

func isMorlocLibrary(name string) bool { return morlocLibrary().MatchString(name) }

// systemLibraryDirs are where a loader finds libraries no run path names.
var systemLibraryDirs = []string{"/lib", "/usr/lib", "/lib64", "/usr/lib64", "/usr/local/lib",
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu"}

func inSystemLibraries(name string) bool {
	for _, d := range systemLibraryDirs {
		if isFile(filepath.Join(d, name)) {
			return true
		}
	}
	return false
}

// looksLikeMorlocHome reports whether p is in a directory laid out as
// morloc's home by default (~/.local/share/morloc) or in $MORLOC_HOME.
func looksLikeMorlocHome(p string) bool {
	if h := os.Getenv("MORLOC_HOME"); h != "" && within(filepath.Clean(h), p) {
		return true
	}
	return strings.Contains(p+"/", "/.local/share/morloc/")
}

// linkedLibraries are the libraries an ELF or Mach-O file needs by name,
// and the directories its own run path has the loader search for them
// ($ORIGIN, @loader_path expanded). A library named by an absolute path
// comes with the directory "/".
func linkedLibraries(p string) (needed, dirs []string, err error) {
	origin := filepath.Dir(p)
	if f, err := elf.Open(p); err == nil {
		defer f.Close()
		needed, _ = f.ImportedLibraries()
		paths, _ := f.DynString(elf.DT_RUNPATH)
		if len(paths) == 0 {
			paths, _ = f.DynString(elf.DT_RPATH)
		}
		for _, list := range paths {
			for _, d := range strings.Split(list, ":") {
				d = strings.NewReplacer("${ORIGIN}", origin, "$ORIGIN", origin).Replace(d)
				if d != "" {
					dirs = append(dirs, filepath.Clean(d))
				}
			}
		}
		return needed, dirs, nil
	}
	f, err := macho.Open(p)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: neither ELF nor Mach-O: %w", p, err)
	}
	defer f.Close()
	expand := strings.NewReplacer("@loader_path", origin, "@executable_path", origin)
	for _, l := range f.Loads {
		if r, ok := l.(*macho.Rpath); ok {
			dirs = append(dirs, filepath.Clean(expand.Replace(r.Path)))
		}
	}
	libs, _ := f.ImportedLibraries()
	var rooted []string
	for _, l := range libs {
		switch {
		case strings.HasPrefix(l, "@rpath/"):
			needed = append(needed, strings.TrimPrefix(l, "@rpath/"))
		case strings.HasPrefix(l, "@"):
			rooted = append(rooted, strings.TrimPrefix(expand.Replace(l), "/"))
		default:
			rooted = append(rooted, strings.TrimPrefix(l, "/"))
		}
	}
	if len(rooted) > 0 {
		// Absolute install names: found from the root, after the run path.
		needed = append(needed, rooted...)
		dirs = append(dirs, "/")
	}
	return needed, dirs, nil
}

// isBinary reports whether p is an ELF or Mach-O file.
func isBinary(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	if _, err := f.ReadAt(magic[:], 0); err != nil {
		return false
	}
	switch string(magic[:]) {
	case "\x7fELF", "\xcf\xfa\xed\xfe", "\xce\xfa\xed\xfe", "\xca\xfe\xba\xbe":
		return true
	}
	return false
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

var (
	pyImport     = lazyRegexp(`(?m)^[ \t]*import[ \t]+([\w., \t]+)`)
	pyFrom       = lazyRegexp(`(?m)^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+([^\n#]+)`)
	pyImportFunc = lazyRegexp(`import_module\([ \t]*["']([\w.-]+)["']`)
)

// pythonImports are the modules a Python source imports, by their dotted
// names: `import a.b, c as d`, `from a.b import c` (a.b, and
// a.b.c should c be a module) and importlib.import_module("a.b"), as
// morloc's pools write them.
func pythonImports(src []byte) []string {
	var names []string
	seen := map[string]bool{}
	add := func(name string) {
		// A relative import (from . import x) is the program's own.
		if name = strings.TrimSpace(name); name != "" && !strings.HasPrefix(name, ".") && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	for _, m := range pyImport().FindAllSubmatch(src, -1) {
		for _, part := range strings.Split(string(m[1]), ",") {
			if f := strings.Fields(part); len(f) > 0 {
				add(f[0])
			}
		}
	}
	for _, m := range pyFrom().FindAllSubmatch(src, -1) {
		add(string(m[1]))
		for _, part := range strings.Split(string(m[2]), ",") {
			if f := strings.Fields(strings.Trim(part, "() \t")); len(f) > 0 {
				add(string(m[1]) + "." + f[0])
			}
		}
	}
	for _, m := range pyImportFunc().FindAllSubmatch(src, -1) {
		add(string(m[1]))
	}
	return names
}

// pythonModule is the files that make the module of a dotted name when
// Python's import finds it in the directory dir: each package's
// __init__.py on the way, then a package directory (all its files) or a
// module, source or an extension built for one or several Pythons
// (name.cpython-311-x86_64-linux-gnu.so, name.abi3.so). None when the
// name is not there.
func pythonModule(dir, dotted string) []string {
	parts := strings.Split(dotted, ".")
	var files []string
	for _, part := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, part)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil
		}
		if f := filepath.Join(dir, "__init__.py"); isFile(f) {
			files = append(files, f)
		}
	}
	name := parts[len(parts)-1]
	pkg := filepath.Join(dir, name)
	if st, err := os.Stat(pkg); err == nil && st.IsDir() {
		filepath.WalkDir(pkg, func(p string, d os.DirEntry, err error) error {
			switch {
			case err != nil:
				return nil
			case d.IsDir() && skipDirs[d.Name()] != "":
				return filepath.SkipDir
			case !d.IsDir() && isFile(p):
				files = append(files, p)
			}
			return nil
		})
		return files
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	found := false
	for _, e := range entries {
		n := e.Name()
		if n == name+".py" || strings.HasPrefix(n, name+".") && strings.HasSuffix(n, ".so") {
			if p := filepath.Join(dir, n); isFile(p) {
				files = append(files, p)
				found = true
			}
		}
	}
	if !found {
		return nil
	}
	return files
}

var rSource = lazyRegexp(`\bsource\([ \t]*["']([^"'\n]+)["']`)

// rSources are the relative paths an R source sources (source(...) and
// morloc's .morloc.source(...)).
func rSources(src []byte) []string {
	var names []string
	for _, m := range rSource().FindAllSubmatch(src, -1) {
		if p := string(m[1]); !filepath.IsAbs(p) {
			names = append(names, p)
		}
	}
	return names
}

// pythonVersions are the Python versions ("3.11") that the carried
// extension modules are built for (their cpython-XY tag); none when they
// name none.
func (rt *morlocRuntime) pythonVersions() []string {
	tag := regexp.MustCompile(`\.cpython-3(\d+)[^/]*\.so$`)
	seen := map[string]bool{}
	var out []string
	for rel := range rt.files {
		if m := tag.FindStringSubmatch(rel); m != nil && !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, "3."+m[1])
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) < len(out[j]) || len(out[i]) == len(out[j]) && out[i] < out[j] })
	return out
}

// names are the carried files, sorted.
func (rt *morlocRuntime) names() []string {
	out := make([]string, 0, len(rt.files))
	for rel := range rt.files {
		out = append(out, rel)
	}
	sort.Strings(out)
	return out
}

// morlocParts is what the bundle carries and changes for a program morloc
// compiled, its program files being files (whose data it sets to the
// changed copies): the runtime its pools load from morloc's home, those
// pools' sources with the home's paths made relative, and a launcher with
// its build directory made ".". A program that already holds morloc-home/
// (an unpacked bundle) is carried as it is.
func morlocParts(m *manifest.Manifest, files []entry) (*morlocRuntime, error) {
	rt := &morlocRuntime{files: map[string]string{}, edits: map[string][]byte{}}
	carried := programPrefix + morlochome.Dir + "/"
	for _, f := range files {
		if strings.HasPrefix(f.name, carried) {
			return rt, nil
		}
	}
	rt, err := findMorlocRuntime(m)
	if err != nil {
		return nil, err
	}
	launcher, err := relocatedLauncher(m)
	if err != nil {
		return nil, err
	}
	if launcher != nil {
		rel, _ := filepath.Rel(filepath.Dir(m.Path), m.Path)
		rt.edits[filepath.ToSlash(rel)] = launcher
	}
	index := map[string]int{}
	for i, f := range files {
		index[f.name] = i
	}
	for rel, data := range rt.edits {
		i, ok := index[programPrefix+rel]
		if !ok {
			return nil, fmt.Errorf("%s must be changed to run where the bundle is unpacked, and the bundle leaves it out", rel)
		}
		files[i].data = data
	}
	return rt, nil
}

// check refuses (or, with AllowMissingPools, reports) each carried
// library that cannot run on one of the bundle's platforms and each part
// of the runtime the pools load that is not on this machine; on is the
// platforms every carried library runs on ("" when none is a library).
func (rt *morlocRuntime) check(o Options, rep *Report) (refused []string, on string, err error) {
	fail := func(msg string) {
		if o.AllowMissingPools {
			rep.Missing = append(rep.Missing, msg)
		} else {
			refused = append(refused, msg)
		}
	}
	var all map[Platform]bool
	for _, rel := range rt.names() {
		if !rt.elf[rel] {
			continue
		}
		runs, err := platformsOf(rt.files[rel])
		if err != nil {
			return nil, "", fmt.Errorf("morloc's runtime: %w", err)
		}
		if all == nil {
			all = maps.Clone(runs)
		}
		maps.DeleteFunc(all, func(p Platform, _ bool) bool { return !runs[p] })
		var missing []string
		for _, pl := range o.Platforms {
			if !runs[pl] {
				missing = append(missing, pl.String())
			}
		}
		if len(missing) > 0 {
			fail(fmt.Sprintf("morloc's runtime file %s (%s) is built for %s, so it cannot run on %s", rel, rt.files[rel], platformList(runs), strings.Join(missing, ", ")))
		}
	}
	for _, u := range rt.unfound {
		fail("morloc's runtime: " + u + " (morloc is not installed as it was when the program was compiled: compile it again)")
	}
	if all != nil {
		on = platformList(all)
	}
	return refused, on, nil
}

// entries are the carried runtime's files in the bundle.
func (rt *morlocRuntime) entries() []entry {
	var out []entry
	for _, rel := range rt.names() {
		mode := os.FileMode(0o644)
		if st, err := os.Stat(rt.files[rel]); err == nil && st.Mode()&0o111 != 0 {
			mode = 0o755
		}
		out = append(out, entry{name: programPrefix + morlochome.Dir + "/" + rel, mode: mode, path: rt.files[rel]})
	}
	return out
}
