package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// Functions that talk back (docs/spec.md §6.3): a Python, an R and a C++
// function ask the user (elicitation), the client's model (sampling) and the
// roots, through the official go-sdk client, over stdio and Streamable HTTP;
// pinned to 2025-06-18 the questions are server requests, and at the
// client's default (2026-07-28) input_required results that the client
// answers and retries (MRTR).
func TestTalkBack(t *testing.T) {
	langs := []struct {
		lang      string
		available func() string
	}{{"py", testenv.PythonMissing}, {"r", rAvailable}, {"cpp", cppAvailable}}
	for _, transport := range []string{"stdio", "http"} {
		for _, era := range []struct{ name, pin, want string }{
			{"2025-06-18", "2025-06-18", "2025-06-18"},
			{"default", "", "2026-07-28"},
		} {
			t.Run(transport+"/"+era.name, func(t *testing.T) {
				if transport == "http" || era.pin == "" {
					testenv.Long(t) // the fast tier keeps one of the four
				}
				ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
				defer cancel()
				var asked atomic.Int32
				cs := talkbackClient(t, ctx, transport, era.pin, &sdk.ClientOptions{
					ElicitationHandler: func(_ context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
						asked.Add(1)
						if r.Params.Message != "What is your name?" {
							t.Errorf("elicitation message %q", r.Params.Message)
						}
						return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
					},
					CreateMessageHandler: func(_ context.Context, r *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
						asked.Add(1)
						text := r.Params.Messages[0].Content.(*sdk.TextContent).Text
						return &sdk.CreateMessageResult{Role: "assistant", Model: "echo",
							Content: &sdk.TextContent{Text: "summary of " + strings.TrimPrefix(text, "Summarise in one line:\n\n")}}, nil
					},
				})
				if got := cs.InitializeResult().ProtocolVersion; got != era.want {
					t.Errorf("negotiated %s, want %s", got, era.want)
				}
				for _, l := range langs {
					t.Run(l.lang, func(t *testing.T) {
						if why := l.available(); why != "" {
							testenv.MissingTool(t, why)
						}
						for _, c := range []struct {
							tool string
							args map[string]any
							want string
						}{
							{"greet_" + l.lang, nil, `"Hello, Ada!"`},
							{"summarise_" + l.lang, map[string]any{"_1": "a long text"}, `"summary of a long text"`},
							{"rootUris_" + l.lang, nil, `["file:///data/project","file:///home/ada"]`},
						} {
							res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
							if err != nil {
								t.Fatalf("%s: %v", c.tool, err)
							}
							if got := firstText(t, res); res.IsError || compactJSON(got) != c.want {
								t.Errorf("%s = %s (isError %v), want %s", c.tool, got, res.IsError, c.want)
							}
						}
					})
				}
				if asked.Load() == 0 {
					t.Error("the client was never asked anything")
				}
			})
		}
	}
}

// TestTalkBackWithoutCapability: a client that did not declare elicitation
// gets a clear isError naming the capability, in both eras, and the pool
// keeps serving.
func TestTalkBackWithoutCapability(t *testing.T) {
	testenv.NeedPython(t)
	for _, pin := range []string{"2025-06-18", ""} {
		t.Run("pin="+pin, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cs := talkbackClient(t, ctx, "stdio", pin, &sdk.ClientOptions{})
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "greet_py"})
			if err != nil {
				t.Fatalf("greet_py: %v", err)
			}
			if got := firstText(t, res); !res.IsError || !strings.Contains(got, "did not declare the elicitation capability") {
				t.Errorf("greet_py = %q (isError %v), want an isError naming the elicitation capability", got, res.IsError)
			}
		})
	}
}

// talkbackClient connects the go-sdk client, with roots, to nexus serving
// testdata/talkback over stdio or HTTP; pin "" lets it choose its version.
func talkbackClient(t *testing.T, ctx context.Context, transport, pin string, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "e2e-talkback", Version: "0"}, opts)
	client.AddRoots(&sdk.Root{URI: "file:///data/project", Name: "project"}, &sdk.Root{URI: "file:///home/ada"})
	return connectGoSDK(t, ctx, client, transport, pin, program("talkback"))
}

func compactJSON(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
