package e2e

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// Functions that talk back, answered by the TypeScript SDK's Client in the
// handshake era, as TestTalkBack's go-sdk client answers them:
// e2e/tsclient/talkback.mjs declares elicitation, sampling and roots, and
// nexus asks it with server requests, on stdout over stdio and on the
// calling POST's SSE stream over Streamable HTTP (docs/pools.md, "Functions
// that talk back"; MCP client/elicitation, client/sampling, client/roots).
// One nexus per transport serves every language; over HTTP two sessions pin
// the two handshake-era versions that have elicitation.
func TestTalkBackTypeScriptSDK(t *testing.T) {
	node, dir := tsClient(t)
	langs := []struct {
		lang      string
		available func() string
	}{{"py", testenv.PythonMissing}, {"r", rAvailable}, {"cpp", cppAvailable}}
	var ready []string // languages this machine can run
	var calls []map[string]any
	for _, l := range langs {
		if why := l.available(); why != "" {
			t.Run(l.lang, func(t *testing.T) { testenv.MissingTool(t, why) })
			continue
		}
		ready = append(ready, l.lang)
		calls = append(calls,
			map[string]any{"name": "greet_" + l.lang},
			map[string]any{"name": "summarise_" + l.lang, "arguments": map[string]any{"_1": "a long text"}},
			map[string]any{"name": "rootUris_" + l.lang})
	}
	if len(ready) == 0 {
		return
	}
	callsJSON, err := json.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}
	// drive runs talkback.mjs at version against where (the transport and
	// its address) and checks what it saw.
	drive := func(t *testing.T, version string, where ...string) {
		t.Helper()
		args := append([]string{"talkback.mjs", version, string(callsJSON)}, where...)
		got := runTSTalkBack(t, node, dir, args)
		if got.ProtocolVersion != version || got.ServerName != "talkback" {
			t.Errorf("negotiated %q with server %q, want %s with talkback", got.ProtocolVersion, got.ServerName, version)
		}
		checkTSTalkBack(t, got, ready)
	}

	// 2025-11-25 is what the SDK offers by itself.
	t.Run("stdio/2025-11-25", func(t *testing.T) { drive(t, "2025-11-25", "stdio", nexusBin, program("talkback")) })
	t.Run("http", func(t *testing.T) {
		testenv.Long(t) // the fast tier keeps the stdio run
		srv := startHTTP(t, nil, "serve", "--port", "0", program("talkback"))
		for _, version := range []string{"2025-06-18", "2025-11-25"} {
			t.Run(version, func(t *testing.T) { drive(t, version, "http", srv.url) })
		}
	})
}

// tsTalkBack is what talkback.mjs prints.
type tsTalkBack struct {
	ProtocolVersion string `json:"protocolVersion"`
	ServerName      string `json:"serverName"`
	Results         []struct {
		Name    string  `json:"name"`
		IsError bool    `json:"isError"`
		Text    *string `json:"text"`
		Error   string  `json:"error"` // a JSON-RPC error or timeout instead of a result
	} `json:"results"`
	Asked struct {
		Elicit []struct {
			Message    string   `json:"message"`
			Properties []string `json:"properties"`
		} `json:"elicit"`
		Sample []struct {
			Prompt       string `json:"prompt"`
			SystemPrompt string `json:"systemPrompt"`
			MaxTokens    int    `json:"maxTokens"`
		} `json:"sample"`
		Roots int `json:"roots"`
	} `json:"asked"`
	Stderr string `json:"stderr"`
}

func runTSTalkBack(t *testing.T, node, dir string, args []string) *tsTalkBack {
	t.Helper()
	var got tsTalkBack
	runNodeJSON(t, node, dir, &got, args...)
	t.Cleanup(func() {
		if t.Failed() && got.Stderr != "" {
			t.Logf("nexus stderr:\n%s", got.Stderr)
		}
	})
	return &got
}

// checkTSTalkBack checks every answer exactly, and that the client's
// handlers were asked once per language, with what the functions sent.
func checkTSTalkBack(t *testing.T, got *tsTalkBack, langs []string) {
	t.Helper()
	want := map[string]string{}
	var order []string
	for _, l := range langs {
		want["greet_"+l] = `"Hello, Ada!"`
		want["summarise_"+l] = `"summary of a long text"`
		want["rootUris_"+l] = `["file:///data/project","file:///home/ada"]`
		order = append(order, "greet_"+l, "summarise_"+l, "rootUris_"+l)
	}
	var seen []string
	for _, r := range got.Results {
		seen = append(seen, r.Name)
		switch {
		case r.Error != "":
			t.Errorf("%s failed: %s", r.Name, r.Error)
		case r.Text == nil:
			t.Errorf("%s: no text content (isError %v)", r.Name, r.IsError)
		case r.IsError || compactJSON(*r.Text) != want[r.Name]:
			t.Errorf("%s = %s (isError %v), want %s", r.Name, *r.Text, r.IsError, want[r.Name])
		}
	}
	if !slices.Equal(seen, order) {
		t.Errorf("results for %v, want %v", seen, order)
	}

	n := len(langs)
	if len(got.Asked.Elicit) != n {
		t.Errorf("elicitation/create asked %d times, want %d", len(got.Asked.Elicit), n)
	}
	for _, e := range got.Asked.Elicit {
		if e.Message != "What is your name?" || !slices.Equal(e.Properties, []string{"name"}) {
			t.Errorf("elicitation/create %q for %v, want %q for [name]", e.Message, e.Properties, "What is your name?")
		}
	}
	if len(got.Asked.Sample) != n {
		t.Errorf("sampling/createMessage asked %d times, want %d", len(got.Asked.Sample), n)
	}
	for _, s := range got.Asked.Sample {
		if s.Prompt != "Summarise in one line:\n\na long text" || s.SystemPrompt != "You write one-line summaries." || s.MaxTokens != 100 {
			t.Errorf("sampling/createMessage %+v, want the summarise prompt, its system prompt and 100 tokens", s)
		}
	}
	if got.Asked.Roots != n {
		t.Errorf("roots/list asked %d times, want %d", got.Asked.Roots, n)
	}
}
