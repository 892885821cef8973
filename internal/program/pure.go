package program

import (
	"fmt"

	"github.com/nexus-mcp/nexus/internal/eval"
	"github.com/nexus-mcp/nexus/internal/manifest"
)

// pureCommand is a pure command compiled at load, or why it cannot run.
type pureCommand struct {
	prog    *eval.Program
	refused *pureRefusal // nil when prog runs
}

// pureRefusal says why a pure command cannot run: its expression did not
// build, or it needs an intrinsic nexus does not have. Either breaks only
// its own command (docs/spec.md §7.1).
type pureRefusal struct {
	command string
	build   error  // the expression did not build
	lacks   string // else what it needs (eval.Program.Refusal)
}

// reason is the refusal as the note on the tool surface words it.
func (r *pureRefusal) reason() string {
	if r.build != nil {
		return "cannot build its expression: " + r.build.Error()
	}
	return r.lacks
}

// Error is the refusal in morloc's words, as the CLI prints it.
func (r *pureRefusal) Error() string {
	if r.build != nil {
		return "failed to build expression: " + r.build.Error()
	}
	return fmt.Sprintf("pure command '%s' %s", r.command, r.lacks)
}

// compilePure compiles one pure command.
func compilePure(m *manifest.Manifest, c *manifest.Command) pureCommand {
	p, err := eval.CompileCommand(c, &eval.Options{Dir: m.Dir})
	switch {
	case err != nil:
		return pureCommand{refused: &pureRefusal{command: c.Name, build: err}}
	case p.Refusal() != "":
		return pureCommand{refused: &pureRefusal{command: c.Name, lacks: p.Refusal()}}
	}
	return pureCommand{prog: p}
}

// purePrograms compiles every pure command of m (internal terminal
// entries too) once, at load.
func purePrograms(m *manifest.Manifest) map[*manifest.Command]pureCommand {
	progs := map[*manifest.Command]pureCommand{}
	for i := range m.Commands {
		if c := &m.Commands[i]; c.Type == manifest.Pure {
			progs[c] = compilePure(m, c)
		}
	}
	return progs
}
