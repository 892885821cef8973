package manifest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// featuresManifest has a resource, a declared prompt, a template, a file
// result, a computed prompt and completions; the error cases break it one
// key at a time.
const featuresManifest = `{"name":"f","pools":[{"lang":"py","exec":["python3","p.py"]}],
 "commands":[
  {"name":"stats","type":"remote","mid":1,"pool":0,"needed_pools":[0],"desc":["Stats of a sample"],
   "args":[{"kind":"pos","schema":"s","type":"Str","name":"sample","desc":["Sample"]}],
   "return":{"schema":"s","type":"Str","desc":[]},
   "metadata":{"resource":{"uriTemplate":"stats://{sample}/summary","mimeType":"text/plain"},
               "completions":{"sample":{"completer":"names"}}}},
  {"name":"names","type":"remote","mid":2,"pool":0,"needed_pools":[0],"desc":["Names"],
   "args":[{"kind":"pos","schema":"s","type":"Str","name":"prefix","desc":[]}],
   "return":{"schema":"as","type":"[Str]","desc":[]},"metadata":{"tool":false}},
  {"name":"plot","type":"remote","mid":3,"pool":0,"needed_pools":[0],"desc":["Plot"],"args":[],
   "return":{"schema":"s","type":"Str","desc":[]},"metadata":{"result":"file","mimeType":"image/png"}},
  {"name":"explain","type":"remote","mid":4,"pool":0,"needed_pools":[0],"desc":["Explain a sample"],
   "args":[{"kind":"pos","schema":"s","type":"Str","name":"sample","desc":[]}],
   "return":{"schema":"s","type":"Str","desc":[]},"metadata":{"prompt":{"title":"Explain"}}}],
 "metadata":{
  "resources":[{"uri":"data://readme","path":"data/README.md","description":"About the data"}],
  "prompts":[{"name":"look","description":"Look at a sample",
    "arguments":[{"name":"sample","required":true,"values":["a","b"]},{"name":"style"}],
    "messages":[{"content":{"type":"text","text":"Look at {sample} ({{literally}}), {style}."}},
                {"role":"assistant","content":{"type":"resource","uri":"stats://{sample}/summary"}},
                {"content":{"type":"image","path":"data/fig.png"}}]}]}}`

func writeFeatures(t *testing.T, manifest string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"manifest.json": manifest, "data/README.md": "# data\n", "data/fig.png": "\x89PNG\r\n\x1a\n"} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "manifest.json")
}

func TestFeaturesParsed(t *testing.T) {
	path := writeFeatures(t, featuresManifest)
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(path)
	if len(m.Resources) != 1 {
		t.Fatalf("resources: %+v", m.Resources)
	}
	r := m.Resources[0]
	if r.URI != "data://readme" || r.Path != filepath.Join(dir, "data", "README.md") || r.Name != "README.md" || r.MimeType != "text/markdown" || r.At != "metadata.resources[0]" {
		t.Errorf("resource: %+v (the name defaults to the file's, the type to its extension's)", r)
	}
	stats := m.Command("stats")
	if tm := stats.Template; tm == nil || !slices.Equal(tm.Vars, []string{"sample"}) || !slices.Equal(tm.Parts, []string{"stats://", "sample", "/summary"}) ||
		tm.Name != "stats" || tm.Description != "Stats of a sample" {
		t.Errorf("template: %+v (name and description default to the command's)", tm)
	}
	if c := stats.Completions["sample"]; c.Completer != "names" {
		t.Errorf("completions: %+v", stats.Completions)
	}
	if !m.Command("names").NotTool || stats.NotTool {
		t.Error("metadata.tool false sets NotTool, and only there")
	}
	if fr := m.Command("plot").FileResult; fr == nil || fr.MimeType != "image/png" {
		t.Errorf("file result: %+v", fr)
	}
	if len(m.Prompts) != 2 {
		t.Fatalf("prompts: %+v", m.Prompts)
	}
	look, explain := m.Prompts[0], m.Prompts[1]
	if look.Name != "look" || len(look.Arguments) != 2 || !look.Arguments[0].Required || !slices.Equal(look.Arguments[0].Completion.Values, []string{"a", "b"}) {
		t.Errorf("declared prompt: %+v", look)
	}
	msgs := look.Messages
	if len(msgs) != 3 || msgs[0].Role != "user" || msgs[1].Role != "assistant" || msgs[1].Type != "resource" ||
		msgs[2].Path != filepath.Join(dir, "data", "fig.png") || msgs[2].MimeType != "image/png" {
		t.Errorf("messages: %+v", msgs)
	}
	if explain.Name != "explain" || explain.Title != "Explain" || explain.Description != "Explain a sample" || explain.Command != m.Command("explain") {
		t.Errorf("computed prompt: %+v", explain)
	}
}

func TestFeaturesRefused(t *testing.T) {
	cases := []struct {
		name, old, new, at, want string
	}{
		{"a path through ..", `"path":"data/README.md"`, `"path":"../x.md"`, "metadata.resources[0].path", "leads outside the program's directory"},
		{"an absolute path", `"path":"data/README.md"`, `"path":"/etc/hostname"`, "metadata.resources[0].path", "expected a path relative to the manifest's directory"},
		{"a missing file", `"path":"data/README.md"`, `"path":"data/gone.md"`, "metadata.resources[0].path", "no such file"},
		{"a directory", `"path":"data/README.md"`, `"path":"data"`, "metadata.resources[0].path", "is not a regular file"},
		{"a URI without scheme", `"uri":"data://readme"`, `"uri":"readme"`, "metadata.resources[0].uri", "expected an absolute URI with a scheme"},
		{"an unknown key", `"description":"About the data"`, `"descripton":"About the data"`, "metadata.resources[0].descripton", `unknown key "descripton"`},
		{"resources not an array", `"resources":[{"uri":"data://readme","path":"data/README.md","description":"About the data"}]`, `"resources":{}`, "metadata.resources", "expected an array of resources"},
		{"a level 2 template", `stats://{sample}/summary`, `stats://{+sample}/summary`, "commands[0].metadata.resource.uriTemplate", "level 1 templates"},
		{"adjacent variables", `stats://{sample}/summary`, `stats://{sample}{x}`, "commands[0].metadata.resource.uriTemplate", "adjacent"},
		{"an unclosed variable", `stats://{sample}/summary`, `stats://{sample/summary`, "commands[0].metadata.resource.uriTemplate", "unclosed '{'"},
		{"a template without scheme", `stats://{sample}/summary`, `{sample}`, "commands[0].metadata.resource.uriTemplate", "fixed scheme"},
		{"an unknown completer", `"completer":"names"`, `"completer":"nobody"`, "commands[0].metadata.completions.sample.completer", `"nobody" names no exported command`},
		{"values and completer", `{"completer":"names"}`, `{"completer":"names","values":["a"]}`, "commands[0].metadata.completions.sample", "not both"},
		{"a file result that is no Str", `"args":[],
   "return":{"schema":"s","type":"Str","desc":[]},"metadata":{"result":"file"`, `"args":[],
   "return":{"schema":"j","type":"Int","desc":[]},"metadata":{"result":"file"`, "commands[2].return.schema", "returns its path, a Str, not a integer"},
		{"a result other than file", `"result":"file"`, `"result":"image"`, "commands[2].metadata.result", `expected "file"`},
		{"a mimeType without a file result", `"result":"file",`, ``, "commands[2].metadata.mimeType", `it goes with "result": "file"`},
		{"tool not a boolean", `"tool":false`, `"tool":"no"`, "commands[1].metadata.tool", "expected true or false"},
		{"a prompt returning a number", `"return":{"schema":"s","type":"Str","desc":[]},"metadata":{"prompt"`, `"return":{"schema":"j","type":"Int","desc":[]},"metadata":{"prompt"`, "commands[3].return.schema", "returns Str (one user message) or a list"},
		{"two prompts named alike", `"prompt":{"title":"Explain"}`, `"prompt":{"name":"look"}`, "commands[3].metadata.prompt", `prompt "look" is already declared at metadata.prompts[0]`},
		{"a placeholder naming no argument", `Look at {sample}`, `Look at {sampel}`, "metadata.prompts[0].messages[0].content.text", "placeholder {sampel} names no argument (the prompt's arguments: sample, style)"},
		{"an unbalanced brace", `({{literally}})`, `({literally}})`, "metadata.prompts[0].messages[0].content.text", "names no argument"},
		{"a bad role", `"role":"assistant"`, `"role":"system"`, "metadata.prompts[0].messages[1].role", `expected "user" or "assistant"`},
		{"an image that is no image", `{"type":"image","path":"data/fig.png"}`, `{"type":"image","path":"data/README.md"}`, "metadata.prompts[0].messages[2].content.mimeType", "needs an image/* MIME type"},
		{"an image without a file", `{"type":"image","path":"data/fig.png"}`, `{"type":"image"}`, "metadata.prompts[0].messages[2].content.path", "expected the image's file"},
		{"text with a uri", `{"type":"text","text":"Look`, `{"type":"text","uri":"x://y","text":"Look`, "metadata.prompts[0].messages[0].content.uri", "a text block has no uri"},
		{"no messages", `]}]}}`, `],"messages":[]}]}}`, "metadata.prompts[0].messages", "expected the prompt's messages (a non-empty array)"},
		{"a prompt without a name", `"name":"look",`, ``, "metadata.prompts[0].name", "expected the prompt's name"},
		{"an argument twice", `{"name":"style"}`, `{"name":"sample"}`, "metadata.prompts[0].arguments[1].name", `argument "sample" is declared twice`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(featuresManifest, tc.old) {
				t.Fatalf("the manifest has no %q to break", tc.old)
			}
			path := writeFeatures(t, strings.Replace(featuresManifest, tc.old, tc.new, 1))
			_, err := Load(path)
			want := "at " + tc.at + ": "
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v\nwant %s...%s", err, want, tc.want)
			}
		})
	}
}

// A resource whose file is a symbolic link leading out of the program's
// directory is refused, as a path through .. is.
func TestFeaturesSymlinkEscape(t *testing.T) {
	path := writeFeatures(t, featuresManifest)
	dir := filepath.Dir(path)
	secret := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(secret, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	readme := filepath.Join(dir, "data", "README.md")
	if err := os.Remove(readme); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, readme); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), "at metadata.resources[0].path: ") || !strings.Contains(err.Error(), "through a symbolic link to "+secret) {
		t.Errorf("got %v, want the link refused", err)
	}
	// A link that stays inside is fine.
	if err := os.Remove(readme); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "real.md"), []byte("# real"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.md", readme); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err != nil {
		t.Errorf("a link inside the program: %v", err)
	}
}

func TestParseURITemplate(t *testing.T) {
	tests := []struct {
		tmpl  string
		parts []string
		err   string
	}{
		{"test://template/{id}/data", []string{"test://template/", "id", "/data"}, ""},
		{"stats://{sample}", []string{"stats://", "sample", ""}, ""},
		{"binom://{n}/{k}", []string{"binom://", "n", "/", "k", ""}, ""},
		{"fixed://all", []string{"fixed://all"}, ""},
		{"x://{a}{b}", nil, "adjacent"},
		{"x://{a}/{a}", nil, "twice"},
		{"x://{?q}", nil, "level 1"},
		{"x://{}", nil, "level 1"},
		{"x://a}", nil, "unbalanced '}'"},
		{"x://{a", nil, "unclosed '{'"},
	}
	for _, tt := range tests {
		parts, _, err := ParseURITemplate(tt.tmpl)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: %v, want an error saying %q", tt.tmpl, err, tt.err)
		case tt.err == "" && (err != nil || !slices.Equal(parts, tt.parts)):
			t.Errorf("%s: %q %v, want %q", tt.tmpl, parts, err, tt.parts)
		}
	}
}

func TestExpandPlaceholders(t *testing.T) {
	vals := map[string]string{"a": "1", "b": "{b}"}
	get := func(n string) (string, bool) { v, ok := vals[n]; return v, ok }
	for in, want := range map[string]string{
		"plain":              "plain",
		"{a} and {b}":        "1 and {b}", // a value is never expanded again
		"{{a}} is {a}":       "{a} is 1",
		"close }} and {{":    "close } and {",
		"{a}{a}":             "11",
		"nested {{{a}}} ok ": "nested {1} ok ",
	} {
		if got, err := ExpandPlaceholders(in, get); err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{"{c}": "placeholder {c} names no argument", "{a": "unclosed", "a}": "unbalanced"} {
		if _, err := ExpandPlaceholders(in, get); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}
