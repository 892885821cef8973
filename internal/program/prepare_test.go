package program

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/manifest"
)

// morloc's NUL check: only a string on its way to a morloc pool whose
// language cannot hold a NUL byte is refused, unless the program or the
// environment turns the check off.
func TestPrepareCallNulCheck(t *testing.T) {
	withNul := json.RawMessage(`["ok", "a\u0000b"]`)
	tests := []struct {
		name    string
		pool    manifest.Pool
		cmdType string
		unsafe  bool   // the program was built with --unsafe-skip-null-check
		env     string // MORLOC_SKIP_NULL_CHECK
		args    []json.RawMessage
		wantErr string
	}{
		{name: "a morloc pool refuses it", pool: manifest.Pool{Lang: "py", Runtime: manifest.RuntimeMorloc}, cmdType: manifest.Remote,
			args: []json.RawMessage{json.RawMessage("1"), withNul}, wantErr: "py does not support embedded NUL bytes in strings (at args[1][1]"},
		{name: "no NUL", pool: manifest.Pool{Lang: "py", Runtime: manifest.RuntimeMorloc}, cmdType: manifest.Remote,
			args: []json.RawMessage{json.RawMessage(`"plain"`)}},
		{name: "a language that holds NUL", pool: manifest.Pool{Lang: "r", Runtime: manifest.RuntimeMorloc, AllowStringNull: true}, cmdType: manifest.Remote,
			args: []json.RawMessage{withNul}},
		{name: "nexus's own runtime checks itself", pool: manifest.Pool{Lang: "py", Runtime: manifest.RuntimeNexus}, cmdType: manifest.Remote,
			args: []json.RawMessage{withNul}},
		{name: "built unchecked", pool: manifest.Pool{Lang: "py", Runtime: manifest.RuntimeMorloc}, cmdType: manifest.Remote, unsafe: true,
			args: []json.RawMessage{withNul}},
		{name: "MORLOC_SKIP_NULL_CHECK", pool: manifest.Pool{Lang: "py", Runtime: manifest.RuntimeMorloc}, cmdType: manifest.Remote, env: "1",
			args: []json.RawMessage{withNul}},
		{name: "a pure command", pool: manifest.Pool{Lang: "py", Runtime: manifest.RuntimeMorloc}, cmdType: manifest.Pure,
			args: []json.RawMessage{withNul}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("MORLOC_SKIP_NULL_CHECK", tt.env)
			m := &manifest.Manifest{Pools: []manifest.Pool{tt.pool}, UnsafeSkipNullCheck: tt.unsafe,
				Commands: []manifest.Command{{Name: "f", Type: tt.cmdType, Pool: 0}}}
			call := argmap.Call{Command: &m.Commands[0], Args: tt.args}
			got, err := prepareCall(m, call)
			if tt.wantErr == "" {
				if err != nil || len(got.Args) != len(tt.args) {
					t.Errorf("prepareCall: %v, args %s; want the call as given", err, got.Args)
				}
				return
			}
			var ie *argmap.InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("prepareCall: %v, want an input error with %q", err, tt.wantErr)
			}
		})
	}
}
