package program

import (
	"fmt"
	"os"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/manifest"
)

// prepareCall does what a call needs before it runs: the files of
// `source: file` arguments read and the given paths checked
// (argmap.Resolve; argmap.CLICall has done it for a CLI call), then
// morloc's NUL check. A failure is the call's error (isError over MCP),
// naming the command, the argument and the check.
func prepareCall(m *manifest.Manifest, call argmap.Call) (argmap.Call, error) {
	resolved, err := argmap.Resolve(call)
	if err != nil {
		return argmap.Call{}, fmt.Errorf("%s: %w", call.Command.Name, err)
	}
	call = resolved
	if err := nulCheck(m, call); err != nil {
		return argmap.Call{}, err
	}
	return call, nil
}

// nulCheck refuses a Str holding a NUL byte on its way to a morloc pool
// whose language cannot hold one (allow_string_null false), unless the
// program was built with --unsafe-skip-null-check, as morloc's nexus does
// (dispatch.rs dispatch_command_parsed, MORLOC_SKIP_NULL_CHECK=1 too).
// nexus's own runtimes check their strings themselves.
func nulCheck(m *manifest.Manifest, call argmap.Call) error {
	c := call.Command
	if m == nil || c == nil || c.Type != manifest.Remote || c.Pool < 0 || c.Pool >= len(m.Pools) {
		return nil
	}
	p := m.Pools[c.Pool]
	if p.AllowStringNull || p.Runtime != manifest.RuntimeMorloc || m.UnsafeSkipNullCheck || skipNullCheckEnv() {
		return nil
	}
	for i, a := range call.Args {
		if at, ok := argmap.FirstNul(a); ok {
			return &argmap.InputError{Msg: fmt.Sprintf("%s does not support embedded NUL bytes in strings (at args[%d]%s)", p.Lang, i, at)}
		}
	}
	return nil
}

// skipNullCheckEnv is MORLOC_SKIP_NULL_CHECK, which turns the check off as
// morloc's runtime reads it (null_check.rs env_skip_null_check).
func skipNullCheckEnv() bool {
	switch os.Getenv("MORLOC_SKIP_NULL_CHECK") {
	case "1", "true", "TRUE", "yes":
		return true
	}
	return false
}
