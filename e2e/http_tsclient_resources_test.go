package e2e

import (
	"encoding/base64"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// The TypeScript SDK's client over Streamable HTTP reads what the go-sdk
// client reads (resources_test.go): static resources, templates computed
// in Python, R and C++, an R function's PNG through its resource_link, a
// subscription that hears an edit, prompts with arguments and an image, a
// missing argument, completions (e2e/conformance/ts-http-resources.mjs).
func TestHTTPTypeScriptSDKResources(t *testing.T) {
	testenv.Long(t)
	plotsAvailable(t)
	node, dir := tsHTTPClient(t)
	everything := copyProgram(t, "everything")
	watched := filepath.Join(everything, "resources", "watched.txt")
	srv := startHTTP(t, nil, "serve", "--port", "0", everything)
	plots := startHTTP(t, nil, "serve", "--port", "0", program("plots"))
	type contents struct {
		URI, MimeType, Text, Blob string
	}
	type message struct {
		Role    string
		Content struct {
			Type, Text, Data, MimeType string
		}
	}
	var got struct {
		ProtocolVersion string
		Capabilities    map[string]any
		Resources       []string
		Templates       []string
		StaticText      contents
		StaticBinary    contents
		TemplateRead    contents
		Updated         []string
		AfterEdit       contents
		PromptWithArgs  struct{ Messages []message }
		PromptWithImage struct{ Messages []message }
		MissingArgument struct {
			Code    int
			Message string
		}
		Complete  struct{ Values []string }
		Python    contents
		R         contents
		Cpp       contents
		Link      struct{ Type, URI, MimeType string }
		Plot      struct{ URI, MimeType, Head string }
		Completer struct{ Values []string }
	}
	runNodeJSON(t, node, dir, &got, "ts-http-resources.mjs", srv.url, plots.url, watched)
	if got.ProtocolVersion != "2025-11-25" || got.Capabilities["resources"] == nil || got.Capabilities["prompts"] == nil {
		t.Errorf("protocol %q, capabilities %v", got.ProtocolVersion, got.Capabilities)
	}
	if !slices.Equal(got.Resources, []string{"test://static-text", "test://static-binary", "test://watched-resource"}) ||
		!slices.Equal(got.Templates, []string{"test://template/{id}/data"}) {
		t.Errorf("resources %v, templates %v", got.Resources, got.Templates)
	}
	if got.StaticText.Text != "This is the content of the static text resource." {
		t.Errorf("static text: %+v", got.StaticText)
	}
	if b, err := base64.StdEncoding.DecodeString(got.StaticBinary.Blob); err != nil || !strings.HasPrefix(string(b), string(pngMagic)) {
		t.Errorf("static binary: %+v", got.StaticBinary)
	}
	if got.TemplateRead.Text != `{"id":"9","templateTest":true,"data":"Data for ID: 9"}` {
		t.Errorf("template (Python): %+v", got.TemplateRead)
	}
	if len(got.Updated) == 0 || got.Updated[0] != "test://watched-resource" || !strings.HasPrefix(got.AfterEdit.Text, "edited by the TypeScript client") {
		t.Errorf("subscription: updated %v, then read %q", got.Updated, got.AfterEdit.Text)
	}
	if m := got.PromptWithArgs.Messages; len(m) != 1 || m[0].Content.Text != "Prompt with arguments: arg1='one', arg2='two'" {
		t.Errorf("prompt with arguments: %+v", m)
	}
	if m := got.PromptWithImage.Messages; len(m) != 2 || m[0].Content.Type != "image" || m[0].Content.MimeType != "image/png" || m[0].Content.Data == "" {
		t.Errorf("prompt with an image: %+v", m)
	}
	if got.MissingArgument.Code != -32602 || !strings.Contains(got.MissingArgument.Message, "missing required argument 'arg2' of prompt 'test_prompt_with_arguments'") {
		t.Errorf("a missing argument: %+v", got.MissingArgument)
	}
	if !slices.Equal(got.Complete.Values, []string{"hello", "help"}) {
		t.Errorf("completion: %v", got.Complete.Values)
	}
	if !strings.HasPrefix(got.Python.Text, "[10.78,") || got.R.Text != "sample treated: n=12 mean=14.348 sd=1.472 min=12.51 max=16.66" || got.Cpp.Text != "2598960" {
		t.Errorf("templates: Python %+v, R %+v, C++ %+v", got.Python, got.R, got.Cpp)
	}
	if got.Link.Type != "resource_link" || got.Link.MimeType != "image/png" || got.Plot.URI != got.Link.URI ||
		got.Plot.MimeType != "image/png" || got.Plot.Head != "89504e470d0a1a0a" {
		t.Errorf("plot: link %+v, read %+v", got.Link, got.Plot)
	}
	if !slices.Equal(got.Completer.Values, []string{"treated", "treated-late"}) {
		t.Errorf("completer: %v", got.Completer.Values)
	}
}
