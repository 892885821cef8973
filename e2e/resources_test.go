package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// Resources, prompts and completions from the program's manifest
// (docs/spec.md §6.1), through the official go-sdk client over stdio and
// Streamable HTTP, in the handshake era (2025-11-25) and statelessly
// (2026-07-28): each read, link, subscription, prompt and completion goes to
// real pools.

// featureModes are the transports and eras the go-sdk client runs in; pin
// "" lets it choose (it probes server/discover: 2026-07-28).
var featureModes = []featureMode{
	{"stdio-2025-11-25", "stdio", "2025-11-25"},
	{"stdio-2026-07-28", "stdio", ""},
	{"http-2025-11-25", "http", "2025-11-25"},
	{"http-2026-07-28", "http", ""},
}

// featureMode is one transport and protocol version of featureModes.
type featureMode struct{ name, transport, pin string }

// forEachFeatureMode runs test as a subtest per feature mode, its context
// ending after within.
func forEachFeatureMode(t *testing.T, within time.Duration, test func(t *testing.T, ctx context.Context, mode featureMode)) {
	for _, mode := range featureModes {
		t.Run(mode.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), within)
			defer cancel()
			test(t, ctx, mode)
		})
	}
}

// pngMagic starts every PNG file.
var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// featureClient connects the go-sdk client to nexus serving dir over
// transport ("stdio" or "http").
func featureClient(t *testing.T, ctx context.Context, transport, pin, dir string, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	return connectGoSDK(t, ctx, sdk.NewClient(&sdk.Implementation{Name: "e2e-resources", Version: "0"}, opts), transport, pin, dir)
}

// connectGoSDK connects client to nexus serving dir over transport
// ("stdio" or "http"), at protocol version pin ("" lets it choose); the
// session closes when the test ends, which shows nexus's stderr on a
// failure over stdio.
func connectGoSDK(t *testing.T, ctx context.Context, client *sdk.Client, transport, pin, dir string) *sdk.ClientSession {
	t.Helper()
	var sessOpts *sdk.ClientSessionOptions
	if pin != "" {
		sessOpts = &sdk.ClientSessionOptions{ProtocolVersion: pin}
	}
	var tr sdk.Transport
	stderr := &syncBuffer{}
	if transport == "http" {
		srv := startHTTP(t, nil, "serve", "--port", "0", dir)
		tr = &sdk.StreamableClientTransport{Endpoint: srv.url, MaxRetries: -1}
	} else {
		cmd := exec.Command(nexusBin, "mcp", dir)
		cmd.Stderr = stderr
		tr = &sdk.CommandTransport{Command: cmd}
	}
	cs, err := client.Connect(ctx, tr, sessOpts)
	if err != nil {
		t.Fatalf("connect (%s): %v", transport, err)
	}
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() && transport == "stdio" {
			t.Logf("nexus stderr:\n%s", stderr.String())
		}
	})
	return cs
}

func readOne(t *testing.T, ctx context.Context, cs *sdk.ClientSession, uri string) *sdk.ResourceContents {
	t.Helper()
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("resources/read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 || res.Contents[0].URI != uri {
		t.Fatalf("resources/read %s: %d contents %+v, want one with its URI", uri, len(res.Contents), res.Contents)
	}
	return res.Contents[0]
}

func plotsAvailable(t *testing.T) {
	t.Helper()
	testenv.NeedPython(t)
	if why := rAvailable(); why != "" {
		testenv.MissingTool(t, why)
	}
	if _, err := os.Stat(filepath.Join(program("plots"), "pools", "cpp", "pool-cpp.out")); err != nil {
		testenv.MissingTool(t, "testdata/plots's C++ pool is not built (needs g++ and nlohmann-json3-dev; run make deps)")
	}
}

// Static resources, a template backed by a Python function, prompts with
// arguments, an embedded resource and an image, a completion, and a
// prompt whose function asks the user first (elicitation in the handshake
// era, an MRTR round in 2026-07-28): testdata/everything.
func TestResourcesAndPromptsGoSDK(t *testing.T) {
	testenv.Long(t)
	testenv.NeedPython(t)
	forEachFeatureMode(t, 90*time.Second, func(t *testing.T, ctx context.Context, mode featureMode) {
		elicited := make(chan string, 4)
		opts := &sdk.ClientOptions{ElicitationHandler: func(_ context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			elicited <- r.Params.Message
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"context": "asked by " + mode.name}}, nil
		}}
		cs := featureClient(t, ctx, mode.transport, mode.pin, program("everything"), opts)
		caps := cs.InitializeResult().Capabilities
		if caps.Resources == nil || caps.Prompts == nil || caps.Completions == nil {
			t.Errorf("capabilities %+v: want resources, prompts and completions", caps)
		}

		list, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatalf("resources/list: %v", err)
		}
		var uris []string
		for _, r := range list.Resources {
			uris = append(uris, r.URI)
		}
		if !slices.Equal(uris, []string{"test://static-text", "test://static-binary", "test://watched-resource"}) {
			t.Errorf("resources/list: %v", uris)
		}
		if c := readOne(t, ctx, cs, "test://static-text"); c.Text != "This is the content of the static text resource." || c.MIMEType != "text/plain" {
			t.Errorf("static text: %+v", c)
		}
		if c := readOne(t, ctx, cs, "test://static-binary"); !bytes.HasPrefix(c.Blob, pngMagic) || c.MIMEType != "image/png" || c.Text != "" {
			t.Errorf("static binary: %q (%s), want a PNG blob", c.Blob, c.MIMEType)
		}

		tmpls, err := cs.ListResourceTemplates(ctx, nil)
		if err != nil || len(tmpls.ResourceTemplates) != 1 || tmpls.ResourceTemplates[0].URITemplate != "test://template/{id}/data" {
			t.Fatalf("resources/templates/list: %+v %v", tmpls, err)
		}
		if c := readOne(t, ctx, cs, "test://template/42/data"); c.Text != `{"id":"42","templateTest":true,"data":"Data for ID: 42"}` || c.MIMEType != "application/json" {
			t.Errorf("template read (Python): %+v", c)
		}

		prompts, err := cs.ListPrompts(ctx, nil)
		if err != nil || len(prompts.Prompts) != 5 {
			t.Fatalf("prompts/list: %+v %v", prompts, err)
		}
		got, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "test_prompt_with_arguments", Arguments: map[string]string{"arg1": "alpha", "arg2": "beta"}})
		if err != nil {
			t.Fatalf("prompts/get with arguments: %v", err)
		}
		if len(got.Messages) != 1 || got.Messages[0].Role != "user" || got.Messages[0].Content.(*sdk.TextContent).Text != "Prompt with arguments: arg1='alpha', arg2='beta'" {
			t.Errorf("prompt with arguments: %+v", got.Messages)
		}
		got, err = cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "test_prompt_with_image"})
		if err != nil {
			t.Fatalf("prompts/get with an image: %v", err)
		}
		if img, ok := got.Messages[0].Content.(*sdk.ImageContent); !ok || !bytes.HasPrefix(img.Data, pngMagic) || img.MIMEType != "image/png" {
			t.Errorf("prompt with an image: %+v", got.Messages[0].Content)
		}
		got, err = cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "test_prompt_with_embedded_resource", Arguments: map[string]string{"resourceUri": "test://mine"}})
		if err != nil {
			t.Fatalf("prompts/get with an embedded resource: %v", err)
		}
		if e, ok := got.Messages[0].Content.(*sdk.EmbeddedResource); !ok || e.Resource.URI != "test://mine" || e.Resource.Text != "Embedded resource content for testing." {
			t.Errorf("prompt with an embedded resource: %+v", got.Messages[0].Content)
		}

		comp, err := cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"},
			Argument: sdk.CompleteParamsArgument{Name: "arg1", Value: "he"}})
		if err != nil || !slices.Equal(comp.Completion.Values, []string{"hello", "help"}) || comp.Completion.Total != 2 {
			t.Errorf("complete arg1 'he': %+v %v, want hello and help", comp, err)
		}
		comp, err = cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/resource", URI: "test://template/{id}/data"},
			Argument: sdk.CompleteParamsArgument{Name: "id", Value: "1"}})
		if err != nil || !slices.Equal(comp.Completion.Values, []string{"1", "123"}) {
			t.Errorf("complete template id '1': %+v %v, want 1 and 123", comp, err)
		}

		// The function behind the prompt asks the user first: a server
		// request in the handshake era, input_required and a retry in
		// 2026-07-28; the go-sdk client answers either way.
		got, err = cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "test_input_required_result_prompt"})
		if err != nil {
			t.Fatalf("prompts/get of a prompt that asks: %v", err)
		}
		if text := got.Messages[0].Content.(*sdk.TextContent).Text; text != "Prompt with context: asked by "+mode.name {
			t.Errorf("prompt that asks: %q", text)
		}
		select {
		case msg := <-elicited:
			if msg != "What context should the prompt use?" {
				t.Errorf("elicitation message %q", msg)
			}
		default:
			t.Error("the client was never asked")
		}
	})
}

// Templates backed by a Python, an R and a C++ function; an R function's
// PNG followed from its resource_link and read as a blob; a prompt that
// walks an agent through it, embedding a computed resource; completions
// from a completer command: testdata/plots.
func TestPlotsGoSDK(t *testing.T) {
	testenv.Long(t)
	plotsAvailable(t)
	forEachFeatureMode(t, 120*time.Second, func(t *testing.T, ctx context.Context, mode featureMode) {
		listChanged := make(chan struct{}, 4)
		opts := &sdk.ClientOptions{ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) {
			listChanged <- struct{}{}
		}}
		cs := featureClient(t, ctx, mode.transport, mode.pin, program("plots"), opts)

		if c := readOne(t, ctx, cs, "samples://control"); !strings.HasPrefix(c.Text, "[10.78,11.32,") || c.MIMEType != "application/json" {
			t.Errorf("samples://control (Python): %+v", c)
		}
		if c := readOne(t, ctx, cs, "stats://treated/summary"); c.Text != "sample treated: n=12 mean=14.348 sd=1.472 min=12.51 max=16.66" || c.MIMEType != "text/plain" {
			t.Errorf("stats://treated/summary (R): %+v", c)
		}
		if c := readOne(t, ctx, cs, "binom://52/5"); c.Text != "2598960" {
			t.Errorf("binom://52/5 (C++): %+v", c)
		}

		if mode.pin != "" {
			// A handshake-era session that listed resources hears of the file.
			if _, err := cs.ListResources(ctx, nil); err != nil {
				t.Fatal(err)
			}
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "plot_values", Arguments: map[string]any{"values": []float64{3, 1, 4, 1, 5, 9, 2, 6}, "title": "Pi digits " + mode.name}})
		if err != nil || res.IsError {
			t.Fatalf("plot_values: %v %+v", err, res)
		}
		link, ok := res.Content[0].(*sdk.ResourceLink)
		if !ok || link.MIMEType != "image/png" || !strings.HasPrefix(link.URI, "nexus://plots/output/pi-digits-") {
			t.Fatalf("plot_values answered %+v, want a resource_link to a PNG", res.Content[0])
		}
		if c := readOne(t, ctx, cs, link.URI); !bytes.HasPrefix(c.Blob, pngMagic) || c.MIMEType != "image/png" || len(c.Blob) < 1000 {
			t.Errorf("the plot (%d bytes, %s) is not a PNG", len(c.Blob), c.MIMEType)
		}
		if mode.pin != "" {
			select {
			case <-listChanged:
			case <-time.After(10 * time.Second):
				t.Error("no notifications/resources/list_changed after a function added a file")
			}
		}
		list, err := cs.ListResources(ctx, nil)
		if err != nil || !slices.ContainsFunc(list.Resources, func(r *sdk.Resource) bool { return r.URI == link.URI }) {
			t.Errorf("resources/list lacks the plot %s: %+v %v", link.URI, list, err)
		}

		got, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "plot_sample", Arguments: map[string]string{"sample": "treated-late", "style": "brief"}})
		if err != nil {
			t.Fatalf("prompts/get plot_sample: %v", err)
		}
		if text := got.Messages[0].Content.(*sdk.TextContent).Text; !strings.Contains(text, "plot_values") || !strings.Contains(text, "stats://treated-late/summary") || !strings.Contains(text, "Style: brief.") {
			t.Errorf("plot_sample's instructions: %q", text)
		}
		if e, ok := got.Messages[1].Content.(*sdk.EmbeddedResource); !ok || e.Resource.URI != "samples://treated-late" || !strings.HasPrefix(e.Resource.Text, "[13.76,") {
			t.Errorf("plot_sample's embedded sample: %+v", got.Messages[1].Content)
		}
		got, err = cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "explain_figure"})
		if err != nil || len(got.Messages) != 2 {
			t.Fatalf("prompts/get explain_figure: %+v %v", got, err)
		}
		if img, ok := got.Messages[0].Content.(*sdk.ImageContent); !ok || !bytes.HasPrefix(img.Data, pngMagic) {
			t.Errorf("explain_figure's image: %+v", got.Messages[0].Content)
		}

		comp, err := cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: "plot_sample"},
			Argument: sdk.CompleteParamsArgument{Name: "sample", Value: "tr"}})
		if err != nil || !slices.Equal(comp.Completion.Values, []string{"treated", "treated-late"}) {
			t.Errorf("complete sample 'tr' (the completer, Python): %+v %v", comp, err)
		}
		comp, err = cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/resource", URI: "stats://{sample}/summary"},
			Argument: sdk.CompleteParamsArgument{Name: "sample", Value: "c"}})
		if err != nil || !slices.Equal(comp.Completion.Values, []string{"control"}) {
			t.Errorf("complete the template's sample 'c': %+v %v", comp, err)
		}
	})
}

// Subscribing to a file resource: an edit of the file brings
// notifications/resources/updated (resources/subscribe in the handshake
// era, a subscriptions/listen stream in 2026-07-28); deleting it brings
// one too, after which reading it is a clear error while the rest of the
// server serves on; writing it again brings it back.
func TestSubscribeGoSDK(t *testing.T) {
	testenv.Long(t)
	testenv.NeedPython(t)
	forEachFeatureMode(t, 90*time.Second, func(t *testing.T, ctx context.Context, mode featureMode) {
		dir := copyProgram(t, "everything")
		watched := filepath.Join(dir, "resources", "watched.txt")
		updated := make(chan string, 16)
		opts := &sdk.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) {
			updated <- r.Params.URI
		}}
		cs := featureClient(t, ctx, mode.transport, mode.pin, dir, opts)
		const uri = "test://watched-resource"
		if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("subscribe: %v", err)
		}
		awaitUpdate := func(what string) {
			t.Helper()
			select {
			case got := <-updated:
				if got != uri {
					t.Errorf("updated %q, want %s", got, uri)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no notifications/resources/updated after %s", what)
			}
			for len(updated) > 0 { // one burst may bring more than one
				<-updated
			}
		}
		// In 2026-07-28 the go-sdk client opens the subscriptions/listen
		// stream in the background: until nexus has it, an edit goes
		// unheard. So edit until one is heard.
		for heard := false; !heard; {
			if err := os.WriteFile(watched, []byte("edited by the test\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			select {
			case <-updated:
				heard = true
			case <-time.After(2 * time.Second):
			case <-ctx.Done():
				t.Fatal("no notifications/resources/updated after edits")
			}
		}
		time.Sleep(200 * time.Millisecond) // the rest of the burst
		for len(updated) > 0 {
			<-updated
		}
		if c := readOne(t, ctx, cs, uri); c.Text != "edited by the test\n" {
			t.Errorf("after the edit: %q", c.Text)
		}

		if err := os.Remove(watched); err != nil {
			t.Fatal(err)
		}
		awaitUpdate("a deletion")
		_, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err == nil || !strings.Contains(err.Error(), "no such file") {
			t.Errorf("reading the deleted file: %v, want an error saying there is no such file", err)
		}
		if c := readOne(t, ctx, cs, "test://static-text"); c.Text == "" {
			t.Error("the server stopped serving the other resources")
		}
		if err := os.WriteFile(watched, []byte("back again\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		awaitUpdate("the file came back")
		if c := readOne(t, ctx, cs, uri); c.Text != "back again\n" {
			t.Errorf("after it came back: %q", c.Text)
		}

		if err := cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: uri}); err != nil {
			t.Fatalf("unsubscribe: %v", err)
		}
		time.Sleep(300 * time.Millisecond) // the listen stream closes
		for len(updated) > 0 {
			<-updated
		}
		if err := os.WriteFile(watched, []byte("unwatched\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-updated:
			t.Errorf("updated %s after unsubscribing", got)
		case <-time.After(time.Second):
		}
	})
}
