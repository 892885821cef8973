package pool

import (
	"context"

	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// runner drives pools of one runtime for a Set: a poolGroup runs one pool
// written against nexus's runtime as workers (worker.go), a morlocProgram
// all of a program's morloc pools as instances (morloc.go). The Set holds
// each pool's runner by index and learns from it all that differs between
// the runtimes; Start's choice of a runner for a Spec is the one place it
// tells them apart.
type runner interface {
	// firstStarts hands each of the runner's first starts to run, which
	// runs it once pools may start (Options.StartDelay) and counts its
	// failure in Set.Ready.
	firstStarts(run func(start func() error))
	// call runs c, a call of a function of pool spec whose timeout (if
	// any) is already running, and sends it again, up to maxTries times,
	// to a fresh process when the one it went to never began it.
	call(ctx context.Context, spec *Spec, c *callRequest) (ndarray.Value, error)
	// stop stops the runner's processes and waits until they are gone.
	// With abandon (Set.Abandon) a runner may leave to the reaper the
	// processes it need not stop itself.
	stop(abandon bool)
}
