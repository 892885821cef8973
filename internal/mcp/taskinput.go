package mcp

// Tasks composed with MRTR (SEP-2663 on top of SEP-2322; the conformance
// suite's tasks-mrtr-composition scenario). A task-supporting command may
// say when its function's questions are put to the client:
//
//	"metadata": {"taskSupport": "required", "taskInput": "before"}
//
// "during" (the default) makes the call a task at once, and a question
// waits in the task's inputRequests for tasks/update (tasks.go). "before"
// gathers the input synchronously first: in 2026-07-28, for a client that
// declares the tasks extension, the call runs as a plain MRTR round
// (mrtr.go). A question the round cannot answer ends the call with
// input_required, exactly as for a tool without tasks; once the function
// has run for the settle time (Options.TaskInputSettle) with no question
// left unanswered, the running call is handed over to a new task and the
// client gets the CreateTaskResult. A function that returns within the
// settle time becomes a task already completed. A question asked after the
// handover goes to the task, as under "during". The handshake era, and a
// client without the extension, ignore the setting: the call is what it
// would be under "during".
//
// The call is handed over, not run again: the work done while settling is
// kept, and the task holds the function suspended in this process's
// memory, as every task does (they are node-local).

import (
	"cmp"
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/jsontext"
)

// TaskInputBefore is the "taskInput" metadata value that gathers a
// function's input through MRTR before its call becomes a task.
const TaskInputBefore = "before"

// DefaultTaskInputSettle is how long a "taskInput":"before" call runs
// without an unanswered question, since it started or since its last
// question, before it becomes a task. It covers a function's first
// question arriving late (a pool busy or just started), and costs a long
// call that much extra before its CreateTaskResult.
const DefaultTaskInputSettle = time.Second

// taskInputBefore reports whether tool's command says "taskInput": "before";
// any other value, or none, is "during".
func taskInputBefore(tool *argmap.Tool) bool {
	if tool.Command == nil {
		return false
	}
	raw, ok := tool.Command.Metadata["taskInput"]
	if !ok {
		return false
	}
	s, ok := jsontext.DecodeString(raw)
	return ok && s == TaskInputBefore
}

// composition is the state of one "before" call: in its MRTR round until
// handed over to its task.
type composition struct {
	task *task

	mu         sync.Mutex
	asking     int  // questions of the round not yet returned to the function
	handedOver bool // the task owns the call now
	returned   bool // the call has returned
	// activity is signalled at each question asked or answered: the settle
	// time starts again.
	activity chan struct{}

	// stream is the request's notification sink, nil once the request is
	// answered: a handed-over call's progress and logs then go nowhere,
	// as a 2026-07-28 task's do.
	streamMu sync.RWMutex
	stream   func(*Notification)
}

// roundOutcome is what callTool answered for a call still in its round.
type roundOutcome struct {
	res    any
	rpcErr *Error
}

// composedToolCall serves a 2026-07-28 tools/call of a "taskInput":"before"
// tool by a client that declares the tasks extension (see the top of this
// file): input_required, a JSON-RPC error, or a CreateTaskResult.
func (s *Server) composedToolCall(ctx context.Context, r *Request, c client) (any, *Error) {
	now := time.Now()
	t := &task{id: newTaskID(), owner: taskOwnerFrom(ctx), stateless: true, created: now, ttl: defaultTaskTTL,
		capabilities: c.capabilities, done: make(chan struct{}), status: taskWorking, updated: now}
	cp := &composition{task: t, stream: notifierFrom(ctx), activity: make(chan struct{}, 1)}
	t.compose = cp
	// The call may outlive the request (once a task), so it runs detached
	// from the request's cancellation, which reaches it below while the
	// request waits.
	runCtx, cancel := context.WithCancel(withNotify(context.WithoutCancel(ctx), cp.send))
	t.cancel = cancel
	// The task's slot is taken before the function runs: a full store
	// refuses the call before any work, not after the input is gathered.
	if rpcErr := s.tasks.add(t); rpcErr != nil {
		cancel()
		return nil, rpcErr
	}
	c.task = t
	out := make(chan roundOutcome, 1)
	go func() {
		res, rpcErr := s.callTool(runCtx, r, c)
		if cp.callReturned() {
			cr, _ := res.(*CallToolResult)
			t.finish(runCtx, cr, rpcErr)
			cancel()
			s.log.Debug("task ended", "task", t.id, "status", t.snapshotStatus())
			return
		}
		out <- roundOutcome{res, rpcErr}
	}()
	defer cp.closeStream()

	settle := cmp.Or(s.opts.TaskInputSettle, DefaultTaskInputSettle)
	quiet := time.NewTimer(settle)
	defer quiet.Stop()
	for {
		select {
		case o := <-out:
			return s.roundEnded(t, runCtx, o)
		case <-cp.activity:
			quiet.Reset(settle)
		case <-quiet.C:
			// A question pending means the round ends soon with
			// input_required (the round's watch); one being answered
			// signals activity when it returns.
			if cp.handOver() {
				s.log.Debug("task created", "task", t.id, "ttl", t.ttl, "after", "its input")
				return s.createdTask(t), nil
			}
		case <-ctx.Done():
			cancel()
			o := <-out
			s.tasks.discard(t)
			return o.res, o.rpcErr
		}
	}
}

// roundEnded answers a "before" call that returned before it was handed
// over: input_required and JSON-RPC errors (a bad requestState, wrong
// arguments) as a plain call would, with no task; a result as a task
// already done.
func (s *Server) roundEnded(t *task, runCtx context.Context, o roundOutcome) (any, *Error) {
	cr, isResult := o.res.(*CallToolResult)
	if o.rpcErr != nil || !isResult {
		s.tasks.discard(t)
		t.cancel()
		return o.res, o.rpcErr
	}
	t.finish(runCtx, cr, nil)
	t.cancel()
	s.log.Debug("task created done", "task", t.id, "status", t.snapshotStatus())
	return s.createdTask(t), nil
}

// createdTask is t's CreateTaskResult (SEP-2663): flat, resultType "task",
// without the result, error or inputRequests that tasks/get inlines.
func (s *Server) createdTask(t *task) object {
	view := t.view(true)
	o := make(object, 0, len(view)+1)
	for _, m := range view {
		switch m.Key {
		case "result", "error", "inputRequests":
			continue
		case "resultType":
			m.Value = "task"
		}
		o = append(o, m)
	}
	return append(o, member{Key: "_meta", Value: s.current().infoMeta})
}

// ask wraps the round's Ask (inner) for the function: before the handover
// it counts the question as the round's, after it the question goes to
// the task.
func (cp *composition) ask(inner askFunc) askFunc {
	return func(ctx context.Context, q Question) (json.RawMessage, error) {
		cp.mu.Lock()
		if cp.handedOver {
			cp.mu.Unlock()
			return cp.task.askByUpdate(ctx, q)
		}
		cp.asking++
		cp.mu.Unlock()
		cp.poke()
		defer func() {
			cp.mu.Lock()
			cp.asking--
			cp.mu.Unlock()
			cp.poke()
		}()
		if inner == nil {
			return nil, &AskError{"this call cannot ask the client"}
		}
		return inner(ctx, q)
	}
}

func (cp *composition) poke() {
	select {
	case cp.activity <- struct{}{}:
	default:
	}
}

// handOver gives the call to its task, unless it has returned or has a
// question of the round outstanding.
func (cp *composition) handOver() bool {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.returned || cp.asking > 0 {
		return false
	}
	cp.handedOver = true
	return true
}

// callReturned records that the call returned and reports whether it was
// handed over (then its task, not the request, takes the outcome).
func (cp *composition) callReturned() bool {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.returned = true
	return cp.handedOver
}

// send passes a notification to the request's stream while the request
// is unanswered.
func (cp *composition) send(n *Notification) {
	cp.streamMu.RLock()
	defer cp.streamMu.RUnlock()
	if cp.stream != nil {
		cp.stream(n)
	}
}

// closeStream stops send before the request is answered: the transport
// may close its stream then.
func (cp *composition) closeStream() {
	cp.streamMu.Lock()
	cp.stream = nil
	cp.streamMu.Unlock()
}

// discard drops a task that never became one (its call ended in the
// round), quietly: no client knows its id.
func (st *taskStore) discard(t *task) {
	st.mu.Lock()
	if st.byID[t.id] == t {
		delete(st.byID, t.id)
	}
	st.mu.Unlock()
	t.expiry.Stop()
}
