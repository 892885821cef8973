package mcp

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/views"
)

// A program's resources and prompts come from its manifest's metadata
// (package manifest, features.go; docs/manifest.md). A Catalog binds them
// to the tools that compute them: a template to the command behind it, a
// prompt to its command, a completion to its completer. It is built once
// per generation of the programs (NewCatalog) and is read-only after.

// CatalogProgram is one served program, as a Catalog needs it.
type CatalogProgram struct {
	Manifest *manifest.Manifest
	// Tools are the program's tools as served (renamed with their module
	// when several programs share a server), those whose command says
	// "tool": false included.
	Tools []*argmap.Tool
	// Prefix is put before the program's prompt names: "" for a server of
	// one program, "<module>__" for several (as its tools are named).
	Prefix string
}

// Catalog holds the resources, templates and prompts of the served
// programs.
type Catalog struct {
	resources []*staticResource
	byURI     map[string]*staticResource
	templates []*template
	prompts   []*prompt
	byPrompt  map[string]*prompt
	// files are the commands whose result is a file, with where such a
	// file may be.
	files map[*manifest.Command]*fileSource
	// fingerprint identifies the catalog's lists in cursors.
	fingerprint uint32
}

type staticResource struct {
	manifest.Resource
	root string // the program's directory, which the file must stay below
}

type template struct {
	manifest.ResourceTemplate
	tool    *argmap.Tool
	program string
	// completions are where each variable's completions come from.
	completions map[string]completionSource
}

type prompt struct {
	name string // as served (with the program's prefix)
	def  *manifest.Prompt
	// tool computes the prompt; nil for a declared one.
	tool *argmap.Tool
	args []promptArg
	// program declares the prompt.
	program *CatalogProgram
}

type promptArg struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required"`
	completion  completionSource
}

// completionSource is where an argument's completions come from: fixed
// values, or a completer tool; neither when it has none.
type completionSource struct {
	values    []string
	completer *argmap.Tool
}

// fileSource is what a file result needs: the program it belongs to and
// the directories its files may be in.
type fileSource struct {
	program  string
	mimeType string
	// dirs are the program's directory and its pools' working directory;
	// workDir the latter, against which a relative path is resolved.
	dirs    []string
	workDir string
}

// NewCatalog builds the catalog of programs. It refuses what the manifest
// alone could not check: a template variable or completion that names no
// property of its command, a command behind a template, a prompt or a
// completion that is not served (excluded from the tool surface), a
// completer that does not take one string and return a list of strings,
// and a URI or prompt name used twice across programs.
func NewCatalog(programs []CatalogProgram) (*Catalog, error) {
	c := &Catalog{byURI: map[string]*staticResource{}, byPrompt: map[string]*prompt{}, files: map[*manifest.Command]*fileSource{}}
	h := sha256.New()
	templates := map[string]string{}
	for pi := range programs {
		p := &programs[pi]
		m := p.Manifest
		byCmd := map[*manifest.Command]*argmap.Tool{}
		for _, t := range p.Tools {
			byCmd[t.Command] = t
		}
		fail := func(at, format string, a ...any) error {
			return &manifest.Error{File: m.Path, Path: at, Msg: fmt.Sprintf(format, a...)}
		}
		toolOf := func(cmd *manifest.Command, at, what string) (*argmap.Tool, error) {
			t := byCmd[cmd]
			if t == nil {
				return nil, fail(at, "command %q %s, but it is not served: it is left off the tool surface (see the note above)", cmd.Name, what)
			}
			return t, nil
		}
		completionOf := func(comp manifest.Completion, prop *argmap.Property, at string) (completionSource, error) {
			var src completionSource
			switch {
			case comp.Completer != "":
				t, err := toolOf(m.Command(comp.Completer), at+".completer", "completes arguments")
				if err != nil {
					return src, err
				}
				if err := checkCompleter(t); err != nil {
					return src, fail(at+".completer", "%v", err)
				}
				src.completer = t
			case comp.Values != nil:
				src.values = comp.Values
			case prop != nil:
				src.values = prop.Enum
			}
			return src, nil
		}
		for i := range m.Resources {
			r := &staticResource{Resource: m.Resources[i], root: m.ProgramDir()}
			if prev, dup := c.byURI[r.URI]; dup {
				return nil, fail(r.At+".uri", "resource %q is served by another program too (%s)", r.URI, prev.At)
			}
			c.byURI[r.URI] = r
			c.resources = append(c.resources, r)
			h.Write([]byte("r\x00" + r.URI + "\x00"))
		}
		for ci := range m.Commands {
			cmd := &m.Commands[ci]
			at := fmt.Sprintf("commands[%d].metadata", ci)
			if _, _, err := views.For(cmd); err != nil {
				return nil, fail(at+".view", "%v", err)
			}
			if cmd.FileResult != nil {
				if _, err := toolOf(cmd, at+".result", "returns a file"); err != nil {
					return nil, err
				}
				dirs := []string{m.ProgramDir()}
				if !slices.Contains(dirs, m.Dir) {
					dirs = append(dirs, m.Dir)
				}
				c.files[cmd] = &fileSource{program: m.Name, mimeType: cmd.FileResult.MimeType, dirs: dirs, workDir: m.Dir}
			}
			props := map[string]argmap.Property{}
			if t := byCmd[cmd]; t != nil {
				for _, pr := range t.Properties() {
					props[pr.Name] = pr
				}
			}
			for name, comp := range cmd.Completions {
				if _, ok := props[name]; !ok {
					return nil, fail(at+".completions."+name, "%q names no argument of %s (its arguments: %s)", name, cmd.Name, propNames(props))
				}
				if _, err := completionOf(comp, nil, at+".completions."+name); err != nil {
					return nil, err
				}
			}
			if cmd.Template == nil {
				continue
			}
			t, err := toolOf(cmd, at+".resource", "computes resources")
			if err != nil {
				return nil, err
			}
			for _, v := range cmd.Template.Vars {
				if _, ok := props[v]; !ok {
					return nil, fail(at+".resource.uriTemplate", "variable {%s} names no argument of %s (its arguments: %s)", v, cmd.Name, propNames(props))
				}
			}
			for _, pr := range props {
				if pr.Required && !slices.Contains(cmd.Template.Vars, pr.Name) {
					return nil, fail(at+".resource.uriTemplate", "%s needs its argument %q, which the template %q does not give: name it as a variable ({%s})", cmd.Name, pr.Name, cmd.Template.URITemplate, pr.Name)
				}
			}
			if prev, dup := templates[cmd.Template.URITemplate]; dup {
				return nil, fail(at+".resource.uriTemplate", "template %q is also computed by %s", cmd.Template.URITemplate, prev)
			}
			templates[cmd.Template.URITemplate] = cmd.Name
			tm := &template{ResourceTemplate: *cmd.Template, tool: t, program: m.Name, completions: map[string]completionSource{}}
			for _, v := range cmd.Template.Vars {
				prop := props[v]
				if tm.completions[v], err = completionOf(cmd.Completions[v], &prop, at+".completions."+v); err != nil {
					return nil, err
				}
			}
			c.templates = append(c.templates, tm)
			h.Write([]byte("t\x00" + cmd.Template.URITemplate + "\x00"))
		}
		for i := range m.Prompts {
			def := &m.Prompts[i]
			pr := &prompt{name: p.Prefix + def.Name, def: def, program: p}
			if def.Command == nil {
				for _, a := range def.Arguments {
					src, err := completionOf(a.Completion, nil, def.At+".arguments")
					if err != nil {
						return nil, err
					}
					pr.args = append(pr.args, promptArg{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required, completion: src})
				}
			} else {
				t, err := toolOf(def.Command, def.At, "computes a prompt")
				if err != nil {
					return nil, err
				}
				pr.tool = t
				for _, prop := range t.Properties() {
					if prop.Name == "_render" {
						continue // a prompt is the command's value, never a projection of it
					}
					src, err := completionOf(def.Command.Completions[prop.Name], &prop, def.At)
					if err != nil {
						return nil, err
					}
					pr.args = append(pr.args, promptArg{Name: prop.Name, Description: prop.Description, Required: prop.Required, completion: src})
				}
			}
			if prev, dup := c.byPrompt[pr.name]; dup {
				return nil, fail(def.At, "prompt %q is also declared by program %s", pr.name, prev.program.Manifest.Name)
			}
			c.byPrompt[pr.name] = pr
			c.prompts = append(c.prompts, pr)
			h.Write([]byte("p\x00" + pr.name + "\x00"))
		}
	}
	c.fingerprint = binary.BigEndian.Uint32(h.Sum(nil))
	return c, nil
}

// checkCompleter requires a completer to take one string (the partial
// value) and return a list of strings.
func checkCompleter(t *argmap.Tool) error {
	var given []argmap.Property
	for _, p := range t.Properties() {
		if p.Name != "_render" {
			given = append(given, p)
		}
	}
	if len(given) != 1 || given[0].Type == nil || given[0].Type.Unwrap().Kind != manifest.Str {
		return fmt.Errorf("completer %s must take one Str argument (the value typed so far)", t.Command.Name)
	}
	rt := t.Command.Return.T.Unwrap()
	if rt.Kind != manifest.List || rt.Elem.Unwrap().Kind != manifest.Str {
		return fmt.Errorf("completer %s must return a list of strings ([Str]), not %s", t.Command.Name, t.Command.Return.TypeName)
	}
	return nil
}

func propNames(props map[string]argmap.Property) string {
	if len(props) == 0 {
		return "none"
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// Empty reports whether the catalog has nothing: no resource, template or
// prompt (nil is empty).
func (c *Catalog) Empty() bool {
	return c == nil || len(c.resources) == 0 && len(c.templates) == 0 && len(c.prompts) == 0 && len(c.files) == 0
}

func (c *Catalog) hasResources() bool {
	return c != nil && (len(c.resources) > 0 || len(c.templates) > 0 || len(c.files) > 0)
}

func (c *Catalog) hasPrompts() bool { return c != nil && len(c.prompts) > 0 }

// hasFiles reports whether a function may add a resource (a file result):
// the list of resources can grow.
func (c *Catalog) hasFiles() bool { return c != nil && len(c.files) > 0 }

// subscribable reports whether some resource is a file a client may
// subscribe to.
func (c *Catalog) subscribable() bool { return c != nil && (len(c.resources) > 0 || len(c.files) > 0) }

// completable reports whether something can be completed.
func (c *Catalog) completable() bool { return c != nil && (len(c.prompts) > 0 || len(c.templates) > 0) }

func (c *Catalog) fileResult(cmd *manifest.Command) *fileSource {
	if c == nil {
		return nil
	}
	return c.files[cmd]
}

// match finds the template a URI belongs to and the values of its
// variables (percent-decoded).
func (c *Catalog) match(uri string) (*template, map[string]string) {
	if c == nil {
		return nil, nil
	}
	for _, t := range c.templates {
		if vals, ok := matchTemplate(t.Parts, uri); ok {
			return t, vals
		}
	}
	return nil, nil
}

func (c *Catalog) templateByURI(uriTemplate string) *template {
	if c == nil {
		return nil
	}
	for _, t := range c.templates {
		if t.URITemplate == uriTemplate {
			return t
		}
	}
	return nil
}
