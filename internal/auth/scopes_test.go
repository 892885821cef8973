package auth_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/auth"
	"github.com/nexus-mcp/nexus/internal/auth/authtest"
	"github.com/nexus-mcp/nexus/internal/manifest"
)

// toolCommands makes one command per name; "admin" asks for lab:admin in
// its metadata.
func toolCommands(names ...string) map[string]*manifest.Command {
	out := map[string]*manifest.Command{}
	for _, n := range names {
		c := &manifest.Command{Name: n, Metadata: map[string]json.RawMessage{}}
		if n == "admin" {
			c.Metadata["scopes"] = json.RawMessage(`["lab:admin"]`)
		}
		out[n] = c
	}
	return out
}

func TestCommandScopes(t *testing.T) {
	cases := []struct {
		meta string
		want []string
		err  string
	}{
		{``, nil, ""},
		{`null`, nil, ""},
		{`"lab:read lab:write"`, []string{"lab:read", "lab:write"}, ""},
		{`["lab:read", "lab:read", "x"]`, []string{"lab:read", "x"}, ""},
		{`3`, nil, "list of strings"},
		{`["a\"b"]`, nil, "printable ASCII"},
	}
	for _, c := range cases {
		t.Run(c.meta, func(t *testing.T) {
			cmd := &manifest.Command{Name: "f", Metadata: map[string]json.RawMessage{}}
			if c.meta != "" {
				cmd.Metadata["scopes"] = json.RawMessage(c.meta)
			}
			got, err := auth.CommandScopes(cmd)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, want an error with %q", err, c.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("got %v %v, want %v", got, err, c.want)
			}
		})
	}
}

func TestParseToolScopes(t *testing.T) {
	got, err := auth.ParseToolScopes([]string{"plot=lab:plot", "admin=lab:admin+lab:write", "plot=lab:read"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got["plot"], []string{"lab:plot", "lab:read"}) || !slices.Equal(got["admin"], []string{"lab:admin", "lab:write"}) {
		t.Errorf("got %v", got)
	}
	for _, bad := range []string{"plot", "=x", "plot=", `plot=a"b`} {
		if _, err := auth.ParseToolScopes([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// The flag wins over the metadata; CheckTools refuses a flag naming no
// tool and unreadable metadata.
func TestToolScopeRules(t *testing.T) {
	is := newIssuerResource(t, map[string][]string{"plain": {"lab:plain"}})
	tools := toolCommands("admin", "plain", "free")
	if err := is.CheckTools(tools); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]string{"admin": {"lab:admin"}, "plain": {"lab:plain"}, "free": nil} {
		if got := is.ToolScopes(name, tools[name]); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	if err := is.CheckTools(toolCommands("admin")); err == nil || !strings.Contains(err.Error(), `"plain", which is not served`) {
		t.Errorf("a flag naming no tool: %v", err)
	}
	bad := toolCommands("plain")
	bad["plain"].Metadata["scopes"] = json.RawMessage(`{}`)
	if err := is.CheckTools(bad); err == nil {
		t.Error("unreadable metadata accepted")
	}
}

func newIssuerResource(t *testing.T, toolScopes map[string][]string) *auth.Resource {
	return newResource(t, authtest.NewIssuer(t), auth.Config{ToolScopes: toolScopes})
}
