package argmap

import (
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// A call's "returns" member: the declared return type as runtimes read it.
func TestDeclaredType(t *testing.T) {
	tests := []struct{ schema, mime, want string }{
		{"j", "", `"int"`},
		{"f4", "", `"real"`},
		{"af8", "", `{"list":"real"}`},
		{"aai4", "", `{"list":{"list":"int"}}`},
		{"?s", "", `{"opt":"str"}`},
		{"t3jbz", "", `{"tuple":["int","bool","null"]}`},
		{"m24names3age?f8", "", `{"record":{"name":"str","age":{"opt":"real"}}}`},
		{"<dict>at2saf8", "", `{"map":{"list":"real"}}`},
		{"<dict>at2jf8", "", `{"list":{"tuple":["int","real"]}}`},
		{"&4Treem24datai14kidsa^4Tree", "", `{"record":{"data":"int","kids":{"list":"any"}}}`},
		{"*", "", `"any"`},
		{"s", "image/png", ``},
	}
	for _, tt := range tests {
		ty, err := manifest.ParseType(tt.schema)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(declaredType(&manifest.Return{T: ty, Mime: tt.mime})); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.schema, got, tt.want)
		}
	}
}
