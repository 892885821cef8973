package manifest

import (
	"encoding/json"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// MCP resources and prompts, read from the metadata objects morloc passes
// through untouched (docs/manifest.md, "Resources and prompts"):
//
//   - the program's metadata.resources: files the program ships;
//   - the program's metadata.prompts: prompts written out in the manifest;
//   - a command's metadata.resource: a URI template whose resources the
//     command computes;
//   - a command's metadata.result "file" (and mimeType): the command returns
//     the path of a file it wrote, served as a resource;
//   - a command's metadata.prompt: a prompt the command computes;
//   - a command's metadata.completions: where the values of its arguments
//     come from when a client asks to complete them;
//   - a command's metadata.tool false: the command is no tool of its own
//     (it only backs a template, a prompt or a completion).
//
// Everything is checked at load, with the JSON path of a fault. What needs
// the tool surface (which property a template variable names) is checked
// by package mcp when it builds the catalog.

// Resource is a file the program ships, served as an MCP resource
// (metadata.resources[i]).
type Resource struct {
	URI, Name, Title, Description, MimeType string
	// Path is the file's absolute path, inside the program's directory.
	Path string
	// At is the resource's JSON path in the manifest, for later errors.
	At string
}

// ResourceTemplate is a command's metadata.resource: the resources whose
// URIs match URITemplate (RFC 6570 level 1) are the command's results,
// each variable naming one of its arguments.
type ResourceTemplate struct {
	URITemplate, Name, Title, Description, MimeType string
	// Vars are the template's variables, in order.
	Vars []string
	// Parts alternate literal text and variables: Parts[0] literal,
	// Parts[1] a variable, Parts[2] literal, ... (literal parts may be "").
	Parts []string
}

// Completion says where the values of an argument come from when a client
// asks to complete it (completion/complete): a fixed list, or a command
// (its completer) that gets the partial value and returns a list of strings.
type Completion struct {
	Values    []string
	Completer string
}

// Prompt is an MCP prompt: declared in the program's metadata.prompts, or
// computed by a command (its metadata.prompt).
type Prompt struct {
	Name, Title, Description string
	// Arguments of a declared prompt; a command's prompt takes the
	// command's arguments (package mcp reads them from its tool).
	Arguments []PromptArgument
	// Messages of a declared prompt.
	Messages []PromptMessage
	// Command computes the prompt; nil for a declared one.
	Command *Command
	// At is the prompt's JSON path in the manifest.
	At string
}

// PromptArgument is one argument of a declared prompt.
type PromptArgument struct {
	Name, Title, Description string
	Required                 bool
	Completion               Completion
}

// PromptMessage is one message of a declared prompt. Text and URI may hold
// {argument} placeholders ({{ and }} stand for braces).
type PromptMessage struct {
	Role string // "user" or "assistant"
	// Type is the content's: "text", "resource" (embedded), "image" or "audio".
	Type string
	// Text: a text block's text, or an embedded resource's contents.
	Text string
	// URI names an embedded resource; without Text or Path, its contents
	// are read from the server's own resources when the prompt is got.
	URI string
	// Path is the file (absolute, inside the program's directory) holding
	// an image, an audio clip or an embedded resource's contents.
	Path     string
	MimeType string
	// At is the message's JSON path in the manifest.
	At string
}

// FileResult is a command's metadata.result "file": it returns the path of
// a file it wrote, which nexus serves as a resource.
type FileResult struct {
	// MimeType is metadata.mimeType; "" guesses from the file's name.
	MimeType string
}

// ProgramDir is the directory the manifest is in: resource paths are
// relative to it, and the files of the program are the files below it.
func (m *Manifest) ProgramDir() string { return filepath.Dir(m.Path) }

// jsonObject is a metadata object read key by key, refusing unknown keys
// so that a typo ("mimetype") is an error rather than silently ignored.
type jsonObject struct {
	at     string
	fields map[string]json.RawMessage
}

func fault(at, format string, a ...any) error {
	return &Error{Path: at, Msg: fmt.Sprintf(format, a...)}
}

func readObject(raw json.RawMessage, at string, known ...string) (*jsonObject, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, fault(at, "expected an object, got %s", kindOf(raw))
	}
	for k := range fields {
		if !slices.Contains(known, k) {
			return nil, fault(at+"."+k, "unknown key %q (expected one of: %s)", k, strings.Join(known, ", "))
		}
	}
	return &jsonObject{at: at, fields: fields}, nil
}

// str reads an optional string member ("" when absent or null).
func (o *jsonObject) str(key string) (string, error) {
	raw, ok := o.fields[key]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fault(o.at+"."+key, "expected a string, got %s", kindOf(raw))
	}
	return s, nil
}

func (o *jsonObject) reqStr(key, what string) (string, error) {
	s, err := o.str(key)
	if err == nil && s == "" {
		err = fault(o.at+"."+key, "expected %s (a non-empty string)", what)
	}
	return s, err
}

func (o *jsonObject) boolean(key string) (bool, error) {
	raw, ok := o.fields[key]
	if !ok || string(raw) == "null" {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, fault(o.at+"."+key, "expected true or false, got %s", kindOf(raw))
	}
	return b, nil
}

func (o *jsonObject) array(key string) ([]json.RawMessage, error) {
	raw, ok := o.fields[key]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var a []json.RawMessage
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fault(o.at+"."+key, "expected an array, got %s", kindOf(raw))
	}
	return a, nil
}

// kindOf names the JSON type of raw, for messages.
func kindOf(raw json.RawMessage) string {
	t := strings.TrimSpace(string(raw))
	switch {
	case t == "":
		return "nothing"
	case t == "null":
		return "null"
	case t == "true" || t == "false":
		return "a boolean"
	case t[0] == '"':
		return "a string"
	case t[0] == '{':
		return "an object"
	case t[0] == '[':
		return "an array"
	}
	return "a number"
}

// parseFeatures reads the resources, prompts and command settings above
// from the manifest's metadata.
func (m *Manifest) parseFeatures() error {
	dir := m.ProgramDir()
	if raw, ok := m.Metadata["resources"]; ok && string(raw) != "null" {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fault("metadata.resources", "expected an array of resources, got %s", kindOf(raw))
		}
		seen := map[string]string{}
		for i, item := range items {
			r, err := parseResource(item, fmt.Sprintf("metadata.resources[%d]", i), dir)
			if err != nil {
				return err
			}
			if prev, dup := seen[r.URI]; dup {
				return fault(r.At+".uri", "resource %q is already declared at %s", r.URI, prev)
			}
			seen[r.URI] = r.At
			m.Resources = append(m.Resources, r)
		}
	}
	for i := range m.Commands {
		if err := m.Commands[i].parseFeatures(fmt.Sprintf("commands[%d]", i), m); err != nil {
			return err
		}
	}
	names := map[string]string{}
	if raw, ok := m.Metadata["prompts"]; ok && string(raw) != "null" {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fault("metadata.prompts", "expected an array of prompts, got %s", kindOf(raw))
		}
		for i, item := range items {
			p, err := parsePrompt(item, fmt.Sprintf("metadata.prompts[%d]", i), dir, m)
			if err != nil {
				return err
			}
			if prev, dup := names[p.Name]; dup {
				return fault(p.At+".name", "prompt %q is already declared at %s", p.Name, prev)
			}
			names[p.Name] = p.At
			m.Prompts = append(m.Prompts, p)
		}
	}
	for i := range m.Commands {
		c := &m.Commands[i]
		raw, ok := c.Metadata["prompt"]
		if !ok || string(raw) == "null" || string(raw) == "false" {
			continue
		}
		at := fmt.Sprintf("commands[%d].metadata.prompt", i)
		p := &Prompt{Name: c.Name, Description: strings.Join(c.Desc, "\n"), Command: c, At: at}
		if string(raw) != "true" {
			o, err := readObject(raw, at, "name", "title", "description")
			if err != nil {
				return fault(at, "expected true or an object with name, title and description, got %s", kindOf(raw))
			}
			if s, err := o.str("name"); err != nil {
				return err
			} else if s != "" {
				p.Name = s
			}
			if p.Title, err = o.str("title"); err != nil {
				return err
			}
			if s, err := o.str("description"); err != nil {
				return err
			} else if s != "" {
				p.Description = s
			}
		}
		if c.Internal {
			return fault(at, "command %q is internal: only an exported command can compute a prompt", c.Name)
		}
		if k := c.Return.T.Unwrap().Kind; k != Str && k != List && k != Any {
			return fault(fmt.Sprintf("commands[%d].return.schema", i), "a command computing a prompt returns Str (one user message) or a list of {role, content} messages, not a %s", k)
		}
		if prev, dup := names[p.Name]; dup {
			return fault(at, "prompt %q is already declared at %s", p.Name, prev)
		}
		names[p.Name] = p.At
		m.Prompts = append(m.Prompts, *p)
	}
	return nil
}

func parseResource(raw json.RawMessage, at, dir string) (Resource, error) {
	o, err := readObject(raw, at, "uri", "path", "name", "title", "description", "mimeType")
	if err != nil {
		return Resource{}, err
	}
	r := Resource{At: at}
	if r.URI, err = o.reqStr("uri", "the resource's URI, such as \"data://samples/a\""); err != nil {
		return r, err
	}
	if !hasScheme(r.URI) {
		return r, fault(at+".uri", "expected an absolute URI with a scheme (\"data://samples/a\", \"file:///...\"), got %q", r.URI)
	}
	rel, err := o.reqStr("path", "the file's path, relative to the manifest")
	if err != nil {
		return r, err
	}
	if r.Path, err = programFile(dir, rel, at+".path"); err != nil {
		return r, err
	}
	if r.Name, err = o.str("name"); err != nil {
		return r, err
	}
	if r.Name == "" {
		r.Name = filepath.Base(r.Path)
	}
	if r.Title, err = o.str("title"); err != nil {
		return r, err
	}
	if r.Description, err = o.str("description"); err != nil {
		return r, err
	}
	if r.MimeType, err = o.str("mimeType"); err != nil {
		return r, err
	}
	if r.MimeType == "" {
		r.MimeType = MimeTypeOf(r.Path)
	}
	return r, nil
}

// hasScheme reports whether uri starts with an RFC 3986 scheme and a colon.
func hasScheme(uri string) bool {
	i := strings.IndexByte(uri, ':')
	if i < 1 {
		return false
	}
	for k, c := range uri[:i] {
		alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !alpha && (k == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// programFile resolves a path the manifest gives relative to the program's
// directory and refuses one that leads outside it, through ".." or a
// symbolic link: a program serves its own files and nothing else.
func programFile(dir, rel, at string) (string, error) {
	if filepath.IsAbs(rel) {
		return "", fault(at, "expected a path relative to the manifest's directory, got the absolute path %q", rel)
	}
	path := filepath.Join(dir, filepath.FromSlash(rel))
	if !Within(dir, path) {
		return "", fault(at, "%q leads outside the program's directory %s: a program serves only its own files", rel, dir)
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", fault(at, "%q: no such file in the program's directory %s", rel, dir)
	}
	if !st.Mode().IsRegular() {
		return "", fault(at, "%q is not a regular file", rel)
	}
	real, err1 := filepath.EvalSymlinks(path)
	realDir, err2 := filepath.EvalSymlinks(dir)
	if err1 != nil || err2 != nil || !Within(realDir, real) {
		return "", fault(at, "%q leads outside the program's directory %s (through a symbolic link to %s): a program serves only its own files", rel, dir, real)
	}
	return path, nil
}

// Within reports whether path is dir or below it (both cleaned, no
// symbolic links resolved).
func Within(dir, path string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// commonTypes are the MIME types of the file names research programs
// ship, fixed here so that a resource's type does not depend on the
// machine's /etc/mime.types.
var commonTypes = map[string]string{
	".txt": "text/plain", ".md": "text/markdown", ".csv": "text/csv", ".tsv": "text/tab-separated-values",
	".json": "application/json", ".xml": "application/xml", ".html": "text/html", ".yaml": "application/yaml",
	".yml": "application/yaml", ".fa": "text/plain", ".fasta": "text/plain", ".fastq": "text/plain",
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".svg": "image/svg+xml",
	".webp": "image/webp", ".pdf": "application/pdf", ".wav": "audio/wav", ".mp3": "audio/mpeg",
}

// MimeTypeOf guesses a file's MIME type from its name: the common types
// above, then the system's table, else application/octet-stream.
func MimeTypeOf(path string) string {
	ext := strings.ToLower(filepath.Ext(path))
	if t, ok := commonTypes[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}

// parseFeatures reads a command's metadata.resource, result, mimeType,
// prompt (checked with the prompts), completions and tool.
func (c *Command) parseFeatures(at string, m *Manifest) error {
	md := c.Metadata
	exported := func(key string) error {
		if c.Internal {
			return fault(at+".metadata."+key, "command %q is internal: only an exported command can have a %s", c.Name, key)
		}
		return nil
	}
	if raw, ok := md["resource"]; ok && string(raw) != "null" {
		if err := exported("resource"); err != nil {
			return err
		}
		t, err := parseTemplate(raw, at+".metadata.resource", c)
		if err != nil {
			return err
		}
		c.Template = t
	}
	if raw, ok := md["result"]; ok && string(raw) != "null" {
		var s string
		if json.Unmarshal(raw, &s) != nil || s != "file" {
			return fault(at+".metadata.result", "expected \"file\" (the command returns the path of a file it wrote), got %s", raw)
		}
		if err := exported("result"); err != nil {
			return err
		}
		if k := c.Return.T.Unwrap().Kind; k != Str {
			return fault(at+".return.schema", "a command whose result is a file returns its path, a Str, not a %s", k)
		}
		c.FileResult = &FileResult{}
	}
	if raw, ok := md["mimeType"]; ok && string(raw) != "null" {
		var s string
		if json.Unmarshal(raw, &s) != nil || !strings.Contains(s, "/") {
			return fault(at+".metadata.mimeType", "expected a MIME type such as \"image/png\", got %s", raw)
		}
		if c.FileResult == nil {
			return fault(at+".metadata.mimeType", "mimeType is the type of a file result: it goes with \"result\": \"file\" (a template's type is metadata.resource.mimeType)")
		}
		c.FileResult.MimeType = s
	}
	if raw, ok := md["completions"]; ok && string(raw) != "null" {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
			return fault(at+".metadata.completions", "expected an object from argument name to {\"values\": [...]} or {\"completer\": COMMAND}, got %s", kindOf(raw))
		}
		c.Completions = map[string]Completion{}
		for name, v := range fields {
			comp, err := parseCompletion(v, at+".metadata.completions."+name, m)
			if err != nil {
				return err
			}
			c.Completions[name] = comp
		}
	}
	if raw, ok := md["tool"]; ok && string(raw) != "null" {
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return fault(at+".metadata.tool", "expected true or false (false: the command is no tool of its own), got %s", raw)
		}
		c.NotTool = !b
	}
	return nil
}

func parseCompletion(raw json.RawMessage, at string, m *Manifest) (Completion, error) {
	o, err := readObject(raw, at, "values", "completer")
	if err != nil {
		return Completion{}, err
	}
	var comp Completion
	values, err := o.array("values")
	if err != nil {
		return comp, err
	}
	for i, v := range values {
		var s string
		if json.Unmarshal(v, &s) != nil {
			return comp, fault(fmt.Sprintf("%s.values[%d]", at, i), "expected a string, got %s", kindOf(v))
		}
		comp.Values = append(comp.Values, s)
	}
	if comp.Completer, err = o.str("completer"); err != nil {
		return comp, err
	}
	switch {
	case comp.Completer != "" && values != nil:
		return comp, fault(at, "expected values or a completer, not both")
	case comp.Completer == "" && values == nil:
		return comp, fault(at, "expected \"values\" (a list of strings) or \"completer\" (a command)")
	case comp.Completer != "":
		c := m.Command(comp.Completer)
		if c == nil || c.Internal {
			return comp, fault(at+".completer", "%q names no exported command of the program", comp.Completer)
		}
	}
	return comp, nil
}

func parseTemplate(raw json.RawMessage, at string, c *Command) (*ResourceTemplate, error) {
	o, err := readObject(raw, at, "uriTemplate", "name", "title", "description", "mimeType")
	if err != nil {
		return nil, err
	}
	t := &ResourceTemplate{}
	if t.URITemplate, err = o.reqStr("uriTemplate", "an RFC 6570 URI template such as \"stats://{sample}\""); err != nil {
		return nil, err
	}
	if t.Parts, t.Vars, err = ParseURITemplate(t.URITemplate); err != nil {
		return nil, fault(at+".uriTemplate", "%v", err)
	}
	if !hasScheme(t.Parts[0]) {
		return nil, fault(at+".uriTemplate", "expected a URI template with a fixed scheme (\"stats://{sample}\"), got %q", t.URITemplate)
	}
	if t.Name, err = o.str("name"); err != nil {
		return nil, err
	}
	if t.Name == "" {
		t.Name = c.Name
	}
	if t.Title, err = o.str("title"); err != nil {
		return nil, err
	}
	if t.Description, err = o.str("description"); err != nil {
		return nil, err
	}
	if t.Description == "" {
		t.Description = strings.Join(c.Desc, "\n")
	}
	if t.MimeType, err = o.str("mimeType"); err != nil {
		return nil, err
	}
	return t, nil
}

// ParseURITemplate splits an RFC 6570 level 1 template ("stats://{sample}/
// summary": simple string expansion only) into literal parts and
// variables, alternating, starting and ending with a literal (maybe
// empty). Two variables with nothing between them could not be told apart
// in a URI, so they are refused.
func ParseURITemplate(tmpl string) (parts, vars []string, err error) {
	rest := tmpl
	var lit strings.Builder
	for rest != "" {
		i := strings.IndexAny(rest, "{}")
		if i < 0 {
			lit.WriteString(rest)
			break
		}
		if rest[i] == '}' {
			return nil, nil, fmt.Errorf("unbalanced '}' in %q", tmpl)
		}
		lit.WriteString(rest[:i])
		end := strings.IndexByte(rest[i:], '}')
		if end < 0 {
			return nil, nil, fmt.Errorf("unclosed '{' in %q", tmpl)
		}
		name := rest[i+1 : i+end]
		if name == "" || strings.IndexFunc(name, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_')
		}) >= 0 {
			return nil, nil, fmt.Errorf("{%s} in %q: nexus reads level 1 templates, whose variables are names of letters, digits and _ (no operators such as + # / ?)", name, tmpl)
		}
		if slices.Contains(vars, name) {
			return nil, nil, fmt.Errorf("variable {%s} appears twice in %q", name, tmpl)
		}
		if len(parts) > 0 && lit.Len() == 0 {
			return nil, nil, fmt.Errorf("variables {%s} and {%s} are adjacent in %q: a URI could not tell where one ends", vars[len(vars)-1], name, tmpl)
		}
		parts = append(parts, lit.String(), name)
		vars = append(vars, name)
		lit.Reset()
		rest = rest[i+end+1:]
	}
	parts = append(parts, lit.String())
	return parts, vars, nil
}

func parsePrompt(raw json.RawMessage, at, dir string, m *Manifest) (Prompt, error) {
	o, err := readObject(raw, at, "name", "title", "description", "arguments", "messages")
	if err != nil {
		return Prompt{}, err
	}
	p := Prompt{At: at}
	if p.Name, err = o.reqStr("name", "the prompt's name"); err != nil {
		return p, err
	}
	if p.Title, err = o.str("title"); err != nil {
		return p, err
	}
	if p.Description, err = o.str("description"); err != nil {
		return p, err
	}
	args, err := o.array("arguments")
	if err != nil {
		return p, err
	}
	for i, a := range args {
		aat := fmt.Sprintf("%s.arguments[%d]", at, i)
		ao, err := readObject(a, aat, "name", "title", "description", "required", "values", "completer")
		if err != nil {
			return p, err
		}
		var pa PromptArgument
		if pa.Name, err = ao.reqStr("name", "the argument's name"); err != nil {
			return p, err
		}
		if slices.ContainsFunc(p.Arguments, func(x PromptArgument) bool { return x.Name == pa.Name }) {
			return p, fault(aat+".name", "argument %q is declared twice", pa.Name)
		}
		if pa.Title, err = ao.str("title"); err != nil {
			return p, err
		}
		if pa.Description, err = ao.str("description"); err != nil {
			return p, err
		}
		if pa.Required, err = ao.boolean("required"); err != nil {
			return p, err
		}
		if _, v := ao.fields["values"]; v || ao.fields["completer"] != nil {
			sub := map[string]json.RawMessage{}
			for _, k := range []string{"values", "completer"} {
				if x, ok := ao.fields[k]; ok {
					sub[k] = x
				}
			}
			b, _ := json.Marshal(sub)
			if pa.Completion, err = parseCompletion(b, aat, m); err != nil {
				return p, err
			}
		}
		p.Arguments = append(p.Arguments, pa)
	}
	msgs, err := o.array("messages")
	if err != nil {
		return p, err
	}
	if len(msgs) == 0 {
		return p, fault(at+".messages", "expected the prompt's messages (a non-empty array), or a command computing the prompt (its metadata.prompt)")
	}
	argNames := make([]string, len(p.Arguments))
	for i, a := range p.Arguments {
		argNames[i] = a.Name
	}
	for i, raw := range msgs {
		msg, err := parseMessage(raw, fmt.Sprintf("%s.messages[%d]", at, i), dir, argNames)
		if err != nil {
			return p, err
		}
		p.Messages = append(p.Messages, msg)
	}
	return p, nil
}

func parseMessage(raw json.RawMessage, at, dir string, args []string) (PromptMessage, error) {
	o, err := readObject(raw, at, "role", "content")
	if err != nil {
		return PromptMessage{}, err
	}
	msg := PromptMessage{At: at, Role: "user"}
	if s, err := o.str("role"); err != nil {
		return msg, err
	} else if s != "" {
		msg.Role = s
	}
	if msg.Role != "user" && msg.Role != "assistant" {
		return msg, fault(at+".role", "expected \"user\" or \"assistant\", got %q", msg.Role)
	}
	craw, ok := o.fields["content"]
	if !ok {
		return msg, fault(at+".content", "expected the message's content: {\"type\": \"text\", \"text\": ...}, {\"type\": \"resource\", \"uri\": ...} or {\"type\": \"image\", \"path\": ...}")
	}
	cat := at + ".content"
	c, err := readObject(craw, cat, "type", "text", "uri", "path", "mimeType")
	if err != nil {
		return msg, err
	}
	if msg.Type, err = c.reqStr("type", "\"text\", \"resource\", \"image\" or \"audio\""); err != nil {
		return msg, err
	}
	if msg.Text, err = c.str("text"); err != nil {
		return msg, err
	}
	if msg.URI, err = c.str("uri"); err != nil {
		return msg, err
	}
	if msg.MimeType, err = c.str("mimeType"); err != nil {
		return msg, err
	}
	rel, err := c.str("path")
	if err != nil {
		return msg, err
	}
	if rel != "" {
		if msg.Path, err = programFile(dir, rel, cat+".path"); err != nil {
			return msg, err
		}
		if msg.MimeType == "" {
			msg.MimeType = MimeTypeOf(msg.Path)
		}
	}
	only := func(want ...string) error {
		for _, k := range []string{"text", "uri", "path"} {
			if _, given := c.fields[k]; given && !slices.Contains(want, k) {
				return fault(cat+"."+k, "a %s block has no %s", msg.Type, k)
			}
		}
		return nil
	}
	switch msg.Type {
	case "text":
		if err := only("text"); err != nil {
			return msg, err
		}
		if _, ok := c.fields["text"]; !ok {
			return msg, fault(cat+".text", "expected the message's text")
		}
	case "resource":
		if err := only("text", "uri", "path"); err != nil {
			return msg, err
		}
		if msg.URI == "" {
			return msg, fault(cat+".uri", "expected the embedded resource's URI (it may hold {argument} placeholders)")
		}
	case "image", "audio":
		if err := only("path"); err != nil {
			return msg, err
		}
		if msg.Path == "" {
			return msg, fault(cat+".path", "expected the %s's file, relative to the manifest", msg.Type)
		}
		if !strings.HasPrefix(msg.MimeType, msg.Type+"/") {
			return msg, fault(cat+".mimeType", "an %s block needs an %s/* MIME type, got %q", msg.Type, msg.Type, msg.MimeType)
		}
	default:
		return msg, fault(cat+".type", "expected \"text\", \"resource\", \"image\" or \"audio\", got %q", msg.Type)
	}
	for _, k := range []string{"text", "uri"} {
		s := msg.Text
		if k == "uri" {
			s = msg.URI
		}
		if _, err := ExpandPlaceholders(s, func(name string) (string, bool) {
			return "", slices.Contains(args, name)
		}); err != nil {
			return msg, fault(cat+"."+k, "%v (the prompt's arguments: %s)", err, strings.Join(args, ", "))
		}
	}
	return msg, nil
}

// ExpandPlaceholders replaces each {name} in text with value(name); {{ and
// }} stand for literal braces. A name value does not know is an error.
func ExpandPlaceholders(text string, value func(name string) (string, bool)) (string, error) {
	if !strings.ContainsAny(text, "{}") {
		return text, nil
	}
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		ch := text[i]
		switch {
		case ch == '{' && i+1 < len(text) && text[i+1] == '{':
			b.WriteByte('{')
			i++
		case ch == '}' && i+1 < len(text) && text[i+1] == '}':
			b.WriteByte('}')
			i++
		case ch == '{':
			end := strings.IndexByte(text[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("unclosed '{' in %q (write {{ for a literal brace)", text)
			}
			name := text[i+1 : i+end]
			v, ok := value(name)
			if !ok {
				return "", fmt.Errorf("placeholder {%s} names no argument", name)
			}
			b.WriteString(v)
			i += end
		case ch == '}':
			return "", fmt.Errorf("unbalanced '}' in %q (write }} for a literal brace)", text)
		default:
			b.WriteByte(ch)
		}
	}
	return b.String(), nil
}
