package install

import (
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/nexus-mcp/nexus/internal/clientconfig"
)

// Found is one client's config file on this machine, for `nexus install
// --list`.
type Found struct {
	Client *clientconfig.Client
	Scope  string
	Path   string
	// Present: the file exists, or the client's own directory does (it is
	// installed, with no servers yet).
	Present bool
	Has     bool  // a server with the program's name is there
	Ours    bool  // and it is nexus's entry for the program
	Err     error // the file cannot be read
}

// List looks for every client's user file, and its project file in l's
// project when there is one, and whether each holds the server name
// (nexus's entry for manifest, when manifest is not "").
func List(l clientconfig.Locator, name, manifest string) []Found {
	var out []Found
	for _, c := range clientconfig.Clients {
		for _, scope := range c.Scopes {
			path, err := c.Path(scope, l)
			if err != nil {
				continue
			}
			f := Found{Client: c, Scope: scope, Path: path}
			src, err := os.ReadFile(path)
			switch {
			case err == nil:
				f.Present = true
				if name != "" {
					f.Has, f.Ours, f.Err = c.Has(src, name, manifest)
				}
			case !os.IsNotExist(err):
				f.Present, f.Err = true, err
			case scope == clientconfig.ScopeProject:
				continue // no project file here: not worth a line
			default:
				for _, m := range c.Marks(l) {
					if _, err := os.Stat(m); err == nil {
						f.Present = true
					}
				}
			}
			out = append(out, f)
		}
	}
	return out
}

// WriteList prints found as a table: client, scope, found, whether it has
// the program (when name is given), file.
func WriteList(w io.Writer, found []Found, name string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "CLIENT\tSCOPE\tFOUND\t"
	if name != "" {
		head += name + "\t"
	}
	fmt.Fprintln(tw, head+"FILE")
	for _, f := range found {
		present := "no"
		if f.Present {
			present = "yes"
		}
		line := fmt.Sprintf("%s\t%s\t%s\t", f.Client.Name, f.Scope, present)
		if name != "" {
			has := "-"
			switch {
			case f.Err != nil:
				has = "unreadable: " + f.Err.Error()
			case f.Ours:
				has = "installed"
			case f.Has:
				has = "name taken"
			case f.Present:
				has = "no"
			}
			line += has + "\t"
		}
		fmt.Fprintln(tw, line+f.Path)
	}
	return tw.Flush()
}
