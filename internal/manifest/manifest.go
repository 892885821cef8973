// Package manifest owns morloc's manifest format (docs/spec.md §2) in every
// form morloc has written since 0.69 (version 1 and the later schema embedded
// in a launcher script, and manifest.json): it finds a program's manifest
// from a target (file, directory or launcher script), decodes it into one set
// of structs, parses every type string into a Type tree, decides which
// runtime each pool speaks (metadata.runtime), and refuses a broken manifest
// with the file, the JSON path of the fault and what was expected. It imports
// nothing else from nexus.
package manifest

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// Format is which of morloc's manifest formats a program came in.
type Format string

// The manifest formats nexus reads (docs/spec.md §2.7).
const (
	// FormatFile is a manifest.json of its own: morloc 0.97 on, and
	// nexus's own programs.
	FormatFile Format = "manifest.json"
	// FormatEmbedded is the same schema embedded in a launcher script
	// after `### MANIFEST ###`: morloc 0.75 to 0.96.
	FormatEmbedded Format = "embedded"
	// FormatV1 is version 1, embedded in a launcher script: morloc 0.69 to
	// 0.74 (v1.go converts it into these structs).
	FormatV1 Format = "version 1"
)

// Manifest is a decoded, validated manifest.
type Manifest struct {
	// Path is the absolute path of the file holding the manifest (a
	// launcher script for an embedded one). Dir is the pools' working
	// directory, against which relative pool exec paths are resolved: the
	// recorded build directory (version 1's build_dir, build.path), taken
	// relative to Path's directory; Path's directory when none is recorded.
	Path   string `json:"-"`
	Dir    string `json:"-"`
	Format Format `json:"-"`

	Name     string                     `json:"name"`
	Build    Build                      `json:"build"`
	Pools    []Pool                     `json:"pools"`
	Commands []Command                  `json:"commands"`
	Groups   []Group                    `json:"groups"`
	Desc     []string                   `json:"desc"`
	Metadata map[string]json.RawMessage `json:"metadata"`

	// What morloc 0.87 on passes to its pools as MORLOC_INLINE_SIZE,
	// MORLOC_NO_SHM and MORLOC_TMPDIR: the largest result sent inline
	// rather than through shared memory (nil: the runtime's default),
	// whether to use files instead of shared memory, and where those go
	// ("": the runtime's default).
	InlineSize *int64 `json:"inline_size"`
	NoShm      bool   `json:"no_shm"`
	TmpDir     string `json:"tmpdir"`

	// Epilogues are the blocks a module docstring's `epilogue:` lines
	// declare, for the end of the top-level help.
	Epilogues [][]string `json:"epilogues"`
	// UnsafeSkipNullCheck turns off the check that refuses a Str holding a
	// NUL byte on its way to a pool whose language cannot hold one
	// (Pool.AllowStringNull false): `morloc make --unsafe-skip-null-check`.
	UnsafeSkipNullCheck bool `json:"unsafe_skip_null_check"`
	// RunLog is the run-scope log templates (nil: none declared).
	RunLog *RunLog `json:"run_log"`
	// Capabilities are the optional features the program was built with
	// ("log", "debug_trace"); ["log"] when the manifest has no such key,
	// as morloc reads it.
	Capabilities []string `json:"capabilities"`
	// Unread are the top-level keys nexus does not read, sorted.
	Unread []string `json:"-"`
	// Ignored notes the fields nexus reads and, as morloc's nexus does,
	// leaves without effect (such as a source on a many argument), each
	// with the JSON path where it is.
	Ignored []string `json:"-"`

	// Resources are metadata.resources: the files the program serves as
	// MCP resources (features.go).
	Resources []Resource `json:"-"`
	// Prompts are metadata.prompts, then the prompts commands compute
	// (their metadata.prompt), in manifest order.
	Prompts []Prompt `json:"-"`
}

// Build records how morloc built the program; only MorlocVersion is reported.
type Build struct {
	Path          string `json:"path"`
	Time          int64  `json:"time"`
	MorlocVersion string `json:"morloc_version"`
	BuildParams   string `json:"build_params"`
}

// Pool is one language subprocess.
type Pool struct {
	Lang            string                     `json:"lang"`
	Exec            []string                   `json:"exec"`
	Socket          string                     `json:"socket"`
	PoolHash        string                     `json:"pool_hash"`
	AllowStringNull bool                       `json:"allow_string_null"`
	Metadata        map[string]json.RawMessage `json:"metadata"`
	// Runtime is metadata.runtime: RuntimeNexus when the pool says
	// "nexus", else RuntimeMorloc (settings.go, parseRuntime).
	Runtime string `json:"-"`
	// Workers is metadata.workers: the pool's process count, 0 when unset.
	Workers int `json:"-"`
	// Arrays is metadata.arrays: "numpy" when the pool's functions take
	// their numeric list arguments as numpy arrays, else "".
	Arrays string `json:"-"`
}

// Group is a CLI help section.
type Group struct {
	Name     string                     `json:"name"`
	Desc     []string                   `json:"desc"`
	Metadata map[string]json.RawMessage `json:"metadata"`
}

// Command types.
const (
	Remote = "remote"
	Pure   = "pure"
)

// Command is one exported (or internal helper) function.
type Command struct {
	Name        string                     `json:"name"`
	Type        string                     `json:"type"`
	Mid         int                        `json:"mid"`
	Pool        int                        `json:"pool"`
	NeededPools []int                      `json:"needed_pools"`
	Desc        []string                   `json:"desc"`
	Args        []Arg                      `json:"args"`
	Return      Return                     `json:"return"`
	Internal    bool                       `json:"internal"`
	Terminals   []Terminal                 `json:"terminals"`
	Metadata    map[string]json.RawMessage `json:"metadata"`
	Group       *string                    `json:"group"`
	// Expr is the expression tree of a pure command, kept for the evaluator.
	Expr json.RawMessage `json:"expr,omitempty"`
	// Timeout is metadata.timeout: 0 when unset, NoTimeout for "none".
	Timeout time.Duration `json:"-"`
	// Constraints span the command's arguments (none written by morloc
	// 0.98; kept and shown in help).
	Constraints []Constraint `json:"constraints"`
	// Fault is the first field of the command whose value nexus does not
	// know (an unknown form, say), with its JSON path; nil when none. Such
	// a command is left off the tool surface and refused on the CLI; the
	// program's other commands are not affected.
	Fault *Error `json:"-"`

	// Template is metadata.resource: the resources the command computes.
	Template *ResourceTemplate `json:"-"`
	// FileResult is set by metadata.result "file": the command returns the
	// path of a file it wrote.
	FileResult *FileResult `json:"-"`
	// Completions are metadata.completions, by argument (property) name.
	Completions map[string]Completion `json:"-"`
	// NotTool is metadata.tool false: the command backs a template, a
	// prompt or a completion, and is no tool of its own.
	NotTool bool `json:"-"`
}

// Return describes a command's result.
type Return struct {
	Schema   string                     `json:"schema"`
	TypeName string                     `json:"type"`
	Desc     []string                   `json:"desc"`
	Mime     string                     `json:"mime,omitempty"`
	Metadata map[string]json.RawMessage `json:"metadata"`
	// Constraints on the result (morloc writes "kind" on named types).
	Constraints []Constraint `json:"constraints"`
	// T is Schema parsed.
	T *Type `json:"-"`
}

// Terminal is an alternative output projection run by an internal entry.
type Terminal struct {
	Short       string `json:"short"`
	Long        string `json:"long"`
	Entry       string `json:"entry"`
	Description string `json:"description"`
	Render      bool   `json:"render"`
	Default     bool   `json:"default"`
}

// Argument kinds.
const (
	KindPos  = "pos"
	KindOpt  = "opt"
	KindFlag = "flag"
	KindGrp  = "grp"
)

// Arg is one argument of a command; which fields are set depends on Kind.
type Arg struct {
	Kind     string   `json:"kind"`
	Schema   string   `json:"schema"`
	TypeName string   `json:"type"`
	Name     *string  `json:"name"`
	Metavar  *string  `json:"metavar"`
	Quoted   bool     `json:"quoted"`
	Many     bool     `json:"many"`
	Stdin    bool     `json:"stdin"`
	Desc     []string `json:"desc"`
	// opt and flag
	Short   string  `json:"short"`
	Long    string  `json:"long"`
	LongRev string  `json:"long_rev"`
	Default *string `json:"default"`
	// grp
	GroupOpt *GroupOpt `json:"group_opt"`
	Entries  []Entry   `json:"entries"`

	// How a value is read (argfields.go); pos and opt only. The source,
	// form and list fields hold their defaults when the manifest has none.
	Source     string  `json:"source"`
	Form       string  `json:"form"`
	Checks     []Check `json:"checks"`
	ListSource string  `json:"list_source"`
	ListForm   string  `json:"list_form"`
	ListChecks []Check `json:"list_checks"`
	// Format is the compiler's one-line hint of how to type the value
	// under a non-default shape ("path to a readable file"); nil when none.
	Format *string `json:"format"`
	// Constraints on the value (morloc writes "kind" on named types).
	Constraints []Constraint `json:"constraints"`

	Metadata map[string]json.RawMessage `json:"metadata"`

	// T is Schema parsed (for a flag: Bool; for a group entry: the field's
	// type taken from the group's record).
	T *Type `json:"-"`
}

// GroupOpt is the option that takes a whole record as JSON.
type GroupOpt struct {
	Short string `json:"short"`
	Long  string `json:"long"`
}

// Entry is one record field of a grp argument.
type Entry struct {
	Key string `json:"key"`
	Arg Arg    `json:"arg"`
}

// DisplayName is how CLI help and messages name an option or flag: its long
// name, else its short one.
func (a *Arg) DisplayName() string {
	if a.Long != "" {
		return a.Long
	}
	return a.Short
}

// Exported lists the commands that are neither internal helpers, in order.
func (m *Manifest) Exported() []*Command {
	var out []*Command
	for i := range m.Commands {
		if !m.Commands[i].Internal {
			out = append(out, &m.Commands[i])
		}
	}
	return out
}

// Command finds a command (internal ones too) by name.
func (m *Manifest) Command(name string) *Command {
	for i := range m.Commands {
		if m.Commands[i].Name == name {
			return &m.Commands[i]
		}
	}
	return nil
}

// WireVersion is the morloc version whose pool wire format the program's
// morloc pools speak: build.morloc_version, or "0.69.0" for a version-1
// manifest (which records none; morloc 0.69 to 0.74 wrote it). "" when
// unknown.
func (m *Manifest) WireVersion() string {
	if m.Format == FormatV1 {
		return "0.69.0"
	}
	return m.Build.MorlocVersion
}

// Version is the version nexus reports for the program: morloc's build
// version when present.
func (m *Manifest) Version() string {
	if m.Build.MorlocVersion != "" {
		return m.Build.MorlocVersion
	}
	return "0.0.0"
}

// CheckDir reports whether the pools' working directory is there. A
// program morloc built before 0.97 records its build directory as an
// absolute path; moved elsewhere, its pools cannot run, and morloc's own
// nexus refuses it too ("Cannot chdir to build_dir", data/nexus.c at
// 0.69.0). The error says where the directory was recorded and what to do.
func (m *Manifest) CheckDir() error {
	st, err := os.Stat(m.Dir)
	switch {
	case err == nil && st.IsDir():
		return nil
	case err == nil:
		err = fmt.Errorf("not a directory")
	}
	if m.Format == FormatFile {
		return fmt.Errorf("program %s: the pools' directory %s: %w", m.Name, m.Dir, err)
	}
	return fmt.Errorf("program %s: the build directory %s that %s records: %w (morloc's own nexus cannot run it either: run `morloc make` again where the program now is)",
		m.Name, m.Dir, m.Path, err)
}
