// Package bundle owns `nexus bundle`: it packs a program into an MCP Bundle
// (.mcpb, github.com/modelcontextprotocol/mcpb, MANIFEST.md, manifest
// version 0.3), the zip a user double-clicks to install a local server in
// Claude Desktop. The bundle holds a nexus binary for each platform asked,
// the program's directory (its manifest, pools and the files its functions
// read, never .git or secret-looking files, never a file from outside it),
// for a program morloc compiled the part of morloc's runtime its pools load
// (morloc.go, docs/bundles.md), and an MCPB manifest.json whose server runs
// `nexus mcp` on the bundled program. The same inputs give the same bytes: entries sorted, one fixed
// timestamp, modes reduced to 0644 and 0755.
package bundle

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/mail"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nexus-mcp/nexus/internal/bundle/morlochome"
	"github.com/nexus-mcp/nexus/internal/manifest"
)

// ManifestVersion is the MCPB manifest schema the bundle follows: 0.3, the
// latest that `mcpb validate` 2.1.2 takes as current and Claude Desktop
// reads (0.4 adds only the "uv" server type).
const ManifestVersion = "0.3"

// modTime is every entry's timestamp, so that the bundle's bytes depend on
// its contents alone (zip's MS-DOS dates start in 1980).
var modTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// Tool is a tool as the MCPB manifest lists it.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Options say what goes into a bundle.
type Options struct {
	Program *manifest.Manifest
	Tools   []Tool // the program's tool surface
	// Platforms are the bundle's platforms, the first the default one;
	// Binaries the nexus executable for each.
	Platforms []Platform
	Binaries  map[Platform]string
	// Version, Author and Icon (a PNG file) override what the program's
	// manifest says (metadata.version, metadata.author).
	Version, Author, Icon string
	// AllowMissingPools bundles a program whose compiled pool does not run
	// on every platform of the bundle (its tools fail there).
	AllowMissingPools bool
	NexusVersion      string
	// Leave are absolute paths not to pack (the bundle being written, when
	// it is inside the program's directory).
	Leave []string
}

// Report says what Write left out and what it allowed.
type Report struct {
	Path    string   // the bundle WriteFile wrote
	Files   int      // the program's files
	Runtime int      // files of morloc's runtime carried beside them
	Skipped []string // "path: why"
	Missing []string // compiled pools allowed to miss platforms
}

// entry is one file of the zip.
type entry struct {
	name string
	mode os.FileMode // 0644 or 0755
	data []byte
	path string // read from here when data is nil
}

// Write packs the bundle into w.
func Write(w io.Writer, o Options) (*Report, error) {
	m := o.Program
	if !sameDir(m.Dir, filepath.Dir(m.Path)) {
		if m.Format != manifest.FormatFile {
			return nil, fmt.Errorf("bundle %s: the launcher %s records the build directory %s, where its pools run, and not its own directory: a bundle holds one directory (run morloc make again where the program now is)", m.Name, m.Path, m.Dir)
		}
		return nil, fmt.Errorf("bundle %s: the program's pools run in %s, not in the directory of its manifest %s: a bundle holds one directory", m.Name, m.Dir, m.Path)
	}
	if len(o.Platforms) == 0 {
		return nil, fmt.Errorf("bundle %s: no platform", m.Name)
	}
	rep := &Report{}
	var entries []entry
	byOS := map[string][]Platform{}
	var osOrder []string // the operating systems, the default one first
	for _, p := range o.Platforms {
		for _, q := range byOS[p.OS] {
			if q == p {
				return nil, fmt.Errorf("bundle %s: platform %s given twice", m.Name, p)
			}
		}
		if len(byOS[p.OS]) == 0 {
			osOrder = append(osOrder, p.OS)
		} else if p.OS != "darwin" {
			return nil, fmt.Errorf("bundle %s: %s and %s: an MCP Bundle chooses its command by operating system only (platform_overrides), and Linux has no executable for two architectures: bundle one Linux architecture", m.Name, byOS[p.OS][0], p)
		}
		byOS[p.OS] = append(byOS[p.OS], p)
		bin, ok := o.Binaries[p]
		if !ok {
			return nil, fmt.Errorf("bundle %s: no nexus binary for %s: give --binary %s=PATH (build one with GOOS=%s GOARCH=%s go build -o PATH ./cmd/nexus)", m.Name, p, p, p.OS, p.Arch)
		}
		runs, err := platformsOf(bin)
		if err != nil {
			return nil, fmt.Errorf("bundle %s: nexus binary for %s: %w", m.Name, p, err)
		}
		if !runs[p] {
			return nil, fmt.Errorf("bundle %s: %s is not a nexus binary for %s (it is for %s)", m.Name, bin, p, platformList(runs))
		}
	}
	// An MCP Bundle picks its command by operating system alone
	// (platform_overrides): one binary per OS. macOS has binaries for two
	// architectures (universal); Linux has not.
	bins := map[string]string{}
	for _, osName := range osOrder {
		ps := byOS[osName]
		if len(ps) == 1 {
			bins[osName] = binaryName(ps[0])
			entries = append(entries, entry{name: bins[osName], mode: 0o755, path: o.Binaries[ps[0]]})
			continue
		}
		paths := make([]string, len(ps))
		for i, p := range ps {
			paths[i] = o.Binaries[p]
		}
		fat, err := universal(paths)
		if err != nil {
			return nil, fmt.Errorf("bundle %s: a universal macOS nexus: %w", m.Name, err)
		}
		bins[osName] = "bin/darwin-universal/nexus"
		entries = append(entries, entry{name: bins[osName], mode: 0o755, data: fat})
	}
	files, err := programFiles(m.Dir, o.Leave, rep)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", m.Name, err)
	}
	rt, err := morlocParts(m, files)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", m.Name, err)
	}
	entries = append(entries, files...)
	entries = append(entries, rt.entries()...)
	needs, err := poolNeeds(m, rt, o, rep)
	if err != nil {
		return nil, err
	}
	mf, err := mcpbManifest(m, o, needs, bins, osOrder)
	if err != nil {
		return nil, err
	}
	if o.Icon != "" {
		icon, err := os.ReadFile(o.Icon)
		if err != nil {
			return nil, fmt.Errorf("bundle %s: --icon: %w", m.Name, err)
		}
		if !bytes.HasPrefix(icon, []byte("\x89PNG\r\n\x1a\n")) {
			return nil, fmt.Errorf("bundle %s: --icon %s is not a PNG file (MCP Bundles take PNG icons)", m.Name, o.Icon)
		}
		entries = append(entries, entry{name: "icon.png", mode: 0o644, data: icon})
	}
	entries = append(entries, entry{name: "manifest.json", mode: 0o644, data: mf})
	rep.Files, rep.Runtime = len(files), len(rt.files)
	return rep, writeZip(w, entries)
}

// binaryName is where the nexus binary for p sits in the bundle.
func binaryName(p Platform) string { return "bin/" + p.OS + "-" + p.Arch + "/nexus" }

// programPrefix is where the program's directory sits in the bundle.
const programPrefix = "program/"

func writeZip(w io.Writer, entries []entry) error {
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	zw := zip.NewWriter(w)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: modTime}
		h.SetMode(e.mode)
		f, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if e.data != nil {
			_, err = f.Write(e.data)
		} else {
			err = copyFile(f, e.path)
		}
		if err != nil {
			return fmt.Errorf("packing %s: %w", e.name, err)
		}
	}
	return zw.Close()
}

func copyFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// Directories never packed: version control, and caches a run leaves
// (Python's bytecode would make two bundles of one program differ).
var skipDirs = map[string]string{".git": "version control", ".hg": "version control", ".svn": "version control",
	"__pycache__": "a cache", ".mypy_cache": "a cache", ".pytest_cache": "a cache", ".Rproj.user": "a cache"}

var secretName = lazyRegexp(`^(\.env(\..*)?|.*\.(pem|key|p12|pfx)|id_(rsa|dsa|ecdsa|ed25519)|\.netrc|\.pypirc|\.npmrc|\.Renviron)$`)

// programFiles lists the files of the program's directory to pack.
func programFiles(dir string, leave []string, rep *Report) ([]entry, error) {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	left := map[string]bool{}
	for _, l := range leave {
		left[filepath.Clean(l)] = true
	}
	var out []entry
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		name := d.Name()
		skip := func(why string) error {
			rep.Skipped = append(rep.Skipped, filepath.ToSlash(rel)+": "+why)
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case p == dir:
			return nil
		case d.IsDir() && skipDirs[name] != "":
			return skip(skipDirs[name])
		case d.IsDir():
			return nil
		case left[filepath.Clean(p)]:
			return nil // the bundle being written
		case strings.HasSuffix(name, ".mcpb"):
			return skip("a bundle")
		case secretName().MatchString(name):
			return skip("looks like a secret")
		case name == ".DS_Store":
			return skip("Finder's")
		}
		st, err := os.Stat(p) // through a link
		if err != nil {
			return skip("unreadable: " + err.Error())
		}
		if d.Type()&os.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(p)
			if err != nil || !within(root, target) {
				return skip("a link to outside the program's directory")
			}
			if st.IsDir() {
				return skip("a link to a directory")
			}
		}
		if !st.Mode().IsRegular() {
			return skip("not a regular file")
		}
		mode := os.FileMode(0o644)
		if st.Mode()&0o111 != 0 {
			mode = 0o755
		}
		out = append(out, entry{name: programPrefix + filepath.ToSlash(rel), mode: mode, path: p})
		return nil
	})
	return out, err
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// needs are what the program's pools need on the user's machine.
type needs struct {
	python, r bool
	compiled  []string // "pools/cpp/pool-cpp.out (linux/amd64)"
	// morloc are the morloc runtime's files the bundle carries, morlocOn
	// the platforms they run on; pythons the Python versions its extension
	// modules are built for ("3.11").
	morloc, pythons []string
	morlocOn        string
}

// poolNeeds finds which interpreters the pools run under, and refuses a
// compiled pool, or a file of the morloc runtime rt carries, that cannot
// run on one of the bundle's platforms.
func poolNeeds(m *manifest.Manifest, rt *morlocRuntime, o Options, rep *Report) (*needs, error) {
	n := &needs{morloc: rt.names(), pythons: rt.pythonVersions()}
	refused, on, err := rt.check(o, rep)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", m.Name, err)
	}
	n.morlocOn = on
	for i, p := range m.Pools {
		if len(p.Exec) == 0 {
			continue
		}
		prog := p.Exec[0]
		switch base := path.Base(filepath.ToSlash(prog)); {
		case strings.HasPrefix(base, "python"):
			n.python = true
			continue
		case base == "Rscript" || base == "R":
			n.r = true
			continue
		}
		if !strings.ContainsRune(prog, '/') {
			continue // another command on PATH: nothing to check
		}
		file := prog
		if !filepath.IsAbs(file) {
			file = filepath.Join(m.Dir, file)
		}
		runs, err := platformsOf(file)
		if err != nil && p.Lang != "cpp" {
			continue // a script of another kind
		}
		var missing []string
		for _, pl := range o.Platforms {
			if !runs[pl] {
				missing = append(missing, pl.String())
			}
		}
		if len(missing) == 0 {
			n.compiled = append(n.compiled, fmt.Sprintf("%s (%s)", prog, platformList(runs)))
			continue
		}
		why := "built for " + platformList(runs)
		if err != nil {
			why = err.Error()
		}
		msg := fmt.Sprintf("pool %d (%s) %s: %s, so it cannot run on %s", i, p.Lang, prog, why, strings.Join(missing, ", "))
		if o.AllowMissingPools {
			rep.Missing = append(rep.Missing, msg)
			n.compiled = append(n.compiled, fmt.Sprintf("%s (%s only)", prog, platformList(runs)))
		} else {
			refused = append(refused, msg)
		}
	}
	if len(refused) > 0 {
		return nil, fmt.Errorf("bundle %s: %s; build the program on each platform and bundle it there, bundle fewer platforms (--platform), or pass --allow-missing-pools to bundle it anyway (its tools then fail there)", m.Name, strings.Join(refused, "; "))
	}
	return n, nil
}

// The MCPB manifest (MANIFEST.md, schema 0.3). Field order is the output's.
type mcpbDoc struct {
	ManifestVersion string                `json:"manifest_version"`
	Name            string                `json:"name"`
	DisplayName     string                `json:"display_name"`
	Version         string                `json:"version"`
	Description     string                `json:"description"`
	LongDescription string                `json:"long_description"`
	Author          mcpbAuthor            `json:"author"`
	Icon            string                `json:"icon,omitempty"`
	Server          mcpbServer            `json:"server"`
	Tools           []Tool                `json:"tools"`
	Compatibility   mcpbCompatibility     `json:"compatibility"`
	UserConfig      map[string]userOption `json:"user_config,omitempty"`
}

type mcpbAuthor struct {
	Name  string `json:"name"`
	Email string `json:"email,omitempty"`
}

type mcpbServer struct {
	Type       string     `json:"type"`
	EntryPoint string     `json:"entry_point"`
	MCPConfig  mcpbConfig `json:"mcp_config"`
}

type mcpbConfig struct {
	Command           string                     `json:"command"`
	Args              []string                   `json:"args"`
	Env               map[string]string          `json:"env,omitempty"`
	PlatformOverrides map[string]mcpbCommandOnly `json:"platform_overrides,omitempty"`
}

type mcpbCommandOnly struct {
	Command string `json:"command"`
}

type mcpbCompatibility struct {
	Platforms []string          `json:"platforms"`
	Runtimes  map[string]string `json:"runtimes,omitempty"`
}

type userOption struct {
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
	Default     string `json:"default"`
}

// EnvironmentKey is the user_config field for the Python or R environment.
const EnvironmentKey = "environment"

// defaultPath follows the chosen environment's bin directory: where
// Homebrew, CRAN's R and the system put python3 and Rscript on macOS and
// Linux.
const defaultPath = "/opt/homebrew/bin:/usr/local/bin:/usr/bin:/bin"

// mcpbManifest is the MCPB manifest.json; bins names the entry of the
// nexus binary for each OS of osOrder.
func mcpbManifest(m *manifest.Manifest, o Options, n *needs, bins map[string]string, osOrder []string) ([]byte, error) {
	meta := func(key string) string {
		var s string
		if raw, ok := m.Metadata[key]; ok {
			_ = json.Unmarshal(raw, &s)
		}
		return s
	}
	version := firstOf(o.Version, meta("version"), m.Version())
	author, err := parseAuthor(firstOf(o.Author, meta("author")))
	if err != nil {
		return nil, fmt.Errorf("bundle %s: --author: %w", m.Name, err)
	}
	if author.Name == "" {
		return nil, fmt.Errorf("bundle %s: an MCP Bundle names its author: pass --author \"Name <email>\" (or set metadata.author in the manifest)", m.Name)
	}
	names := make([]string, len(o.Tools))
	for i, t := range o.Tools {
		names[i] = t.Name
	}
	description := strings.TrimSpace(strings.Join(m.Desc, " "))
	if description == "" {
		description = fmt.Sprintf("%s: %s, served as MCP tools by nexus", m.Name, strings.Join(names, ", "))
	}
	first := bins[osOrder[0]]
	cfg := mcpbConfig{
		Command: "${__dirname}/" + first,
		Args:    []string{"mcp", "${__dirname}/" + programPrefix + filepath.Base(m.Path)},
	}
	platforms := append([]string{}, osOrder...)
	sort.Strings(platforms)
	for _, osName := range osOrder {
		if len(osOrder) > 1 {
			if cfg.PlatformOverrides == nil {
				cfg.PlatformOverrides = map[string]mcpbCommandOnly{}
			}
			cfg.PlatformOverrides[osName] = mcpbCommandOnly{Command: "${__dirname}/" + bins[osName]}
		}
	}
	sort.Strings(platforms)
	long := []string{fmt.Sprintf("Served by nexus %s, which runs the program's functions in their own languages:", o.NexusVersion)}
	doc := mcpbDoc{
		ManifestVersion: ManifestVersion,
		Name:            packageName(m.Name),
		DisplayName:     m.Name,
		Version:         version,
		Description:     description,
		Author:          author,
		Server:          mcpbServer{Type: "binary", EntryPoint: first, MCPConfig: cfg},
		Tools:           o.Tools,
		Compatibility:   mcpbCompatibility{Platforms: platforms},
	}
	switch {
	case n.python && len(n.pythons) > 0:
		// morloc's Python extension runs only under the Python it was built for.
		ranges := make([]string, len(n.pythons))
		for i, v := range n.pythons {
			ranges[i] = v + ".x"
		}
		doc.Compatibility.Runtimes = map[string]string{"python": strings.Join(ranges, " || ")}
		long = append(long, fmt.Sprintf("- Python functions run with python3 %s (the Python morloc's runtime was built for) and the packages they import.", strings.Join(n.pythons, " or ")))
	case n.python:
		doc.Compatibility.Runtimes = map[string]string{"python": ">=3.8"}
		long = append(long, "- Python functions run with python3 (3.8 or later) and the packages they import.")
	}
	if n.r {
		long = append(long, "- R functions run with Rscript (R, with the jsonlite package) and the packages they load.")
	}
	for _, c := range n.compiled {
		long = append(long, "- Compiled functions run from "+c+".")
	}
	if len(n.morloc) > 0 {
		built := ""
		if n.morlocOn != "" {
			built = ", built for " + n.morlocOn + ","
		}
		long = append(long, fmt.Sprintf("- morloc's runtime%s comes in program/%s (%s): no morloc install is needed.", built, morlochome.Dir, strings.Join(n.morloc, ", ")))
	}
	if n.python || n.r {
		// As --mcp-config puts the user's PATH in the entry: clients start
		// servers with a minimal one, which finds the system's interpreters
		// and not the environment holding the user's packages.
		cfg := &doc.Server.MCPConfig
		cfg.Env = map[string]string{"PATH": "${user_config." + EnvironmentKey + "}/bin:" + defaultPath}
		doc.UserConfig = map[string]userOption{EnvironmentKey: {
			Type:        "directory",
			Title:       "Python/R environment",
			Description: "The environment whose python3 and Rscript run the functions, with their packages: a conda environment, a virtualenv or an install prefix (its bin directory goes first on PATH). Leave it empty for the interpreters on the system's PATH.",
			Default:     "",
		}}
		long = append(long, "", "When you install it, choose the environment (conda, virtualenv or prefix) that holds the interpreters and packages the functions need.")
	}
	doc.LongDescription = strings.Join(long, "\n")
	if o.Icon != "" {
		doc.Icon = "icon.png"
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func firstOf(s ...string) string {
	for _, x := range s {
		if strings.TrimSpace(x) != "" {
			return strings.TrimSpace(x)
		}
	}
	return ""
}

// parseAuthor takes "Name" or "Name <email>".
func parseAuthor(s string) (mcpbAuthor, error) {
	if !strings.Contains(s, "<") {
		return mcpbAuthor{Name: s}, nil
	}
	a, err := mail.ParseAddress(s)
	if err != nil {
		return mcpbAuthor{}, fmt.Errorf("%q: expected \"Name\" or \"Name <email>\": %v", s, err)
	}
	return mcpbAuthor{Name: a.Name, Email: a.Address}, nil
}

// packageName is the program's name as an MCPB package identifier:
// lowercase, words joined by hyphens.
func packageName(name string) string {
	var b strings.Builder
	for i, r := range name {
		switch {
		case r >= 'A' && r <= 'Z':
			if i > 0 && b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
				b.WriteByte('-')
			}
			b.WriteRune(r + 'a' - 'A')
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}
