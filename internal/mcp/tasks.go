package mcp

// MCP Tasks: a tools/call that answers at once with a task, whose status
// the client polls and whose result it fetches later.
//
// Two wire forms share one store and one runner:
//
//   - 2025-11-25 (handshake era; basic/utilities/tasks): the client asks
//     for a task with params.task {ttl}; tasks/get, tasks/result (blocks),
//     tasks/list, tasks/cancel; notifications/tasks/status on changes; a
//     question the function asks while it runs goes out with
//     _meta["io.modelcontextprotocol/related-task"] and holds the task in
//     input_required.
//   - 2026-07-28 (the io.modelcontextprotocol/tasks extension, SEP-2663, as
//     the conformance suite's pending tasks scenarios check it): the server
//     decides, so a task-supporting tool called by a client that declares
//     the extension is always a task (one whose metadata says "taskInput":
//     "before" once MRTR rounds have its input: taskinput.go); the result
//     is flat (resultType "task", ttlMs, pollIntervalMs); tasks/get
//     inlines the result or error and any inputRequests; tasks/update
//     carries inputResponses to a function waiting for them; tasks/cancel
//     and tasks/update answer an empty ack.
//
// Tasks live in memory (they are node-local: a function waiting for input
// stays suspended here) until their TTL passes, at most Options.MaxTasks at
// once, and are cancelled when their session ends or the server closes.
// A task belongs to its owner (a session, or over HTTP without one the
// identity whose credentials made it: a token's subject, never the token);
// to anyone else it does not exist.

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/jsontext"
)

// TasksExtension is the 2026-07-28 extension that carries tasks (SEP-2663).
const TasksExtension = "io.modelcontextprotocol/tasks"

// tasksRequired is the ClientCapabilities a 2026-07-28 task needs: checked
// by missingCapabilities, as a command's requiredClientCapabilities are, and
// named in the -32021 error's data.
var tasksRequired = json.RawMessage(`{"extensions":{"` + TasksExtension + `":{}}}`)

// metaRelatedTask ties a message to its task (2025-11-25).
const metaRelatedTask = "io.modelcontextprotocol/related-task"

// DefaultMaxTasks is how many tasks may exist at once by default.
const DefaultMaxTasks = 1000

const (
	// defaultTaskTTL keeps a task whose client named no ttl for an hour.
	defaultTaskTTL = time.Hour
	// maxTaskTTL caps what a client may ask for: a task holds its result
	// (and, while it runs, a function) in memory.
	maxTaskTTL = 24 * time.Hour
	// taskPollInterval is the pollInterval nexus suggests.
	taskPollInterval = time.Second
)

// Task statuses (2025-11-25 "Task Status"; SEP-2663 keeps them).
const (
	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"
)

func terminal(status string) bool {
	return status == taskCompleted || status == taskFailed || status == taskCancelled
}

// askFunc is CallHooks.Ask's type.
type askFunc = func(ctx context.Context, q Question) (json.RawMessage, error)

// task is one task-augmented tools/call.
type task struct {
	id        string
	owner     string
	seq       uint64 // creation order, for tasks/list
	stateless bool   // the 2026-07-28 extension's wire form
	created   time.Time
	ttl       time.Duration
	// notify sends notifications/tasks/status (handshake era); nil sends none.
	notify func(*Notification)
	// capabilities are the client's, for what the function may ask (2026-07-28).
	capabilities json.RawMessage
	cancel       context.CancelFunc
	done         chan struct{} // closed once the call has returned and its outcome is stored
	expiry       *time.Timer

	// callErr is the Caller's error, set by runTool on the task's own
	// goroutine before the outcome is stored.
	callErr error
	// compose, for a "taskInput":"before" call, holds it in its MRTR round
	// until it is handed over (taskinput.go).
	compose *composition

	mu      sync.Mutex
	status  string
	message string // statusMessage
	updated time.Time
	result  *CallToolResult
	rpcErr  *Error
	asking  int // questions outstanding through the client's own Ask (handshake era)
	// inputs are the questions waiting for tasks/update (2026-07-28), by key.
	inputs    map[string]*pendingInput
	nextInput int
}

// pendingInput is a question a function asked in a 2026-07-28 task.
type pendingInput struct {
	request object // {"method", "params"}: the request the client is to answer
	answer  chan json.RawMessage
}

// taskStore holds a server's tasks.
type taskStore struct {
	max int

	mu     sync.Mutex
	byID   map[string]*task
	seq    uint64
	closed bool
}

func newTaskStore(max int) *taskStore {
	if max <= 0 {
		max = DefaultMaxTasks
	}
	return &taskStore{max: max, byID: map[string]*task{}}
}

// tasksEnabled reports whether any tool now served may run as a task.
func (s *Server) tasksEnabled() bool { return s.current().taskTools }

// errTaskLimit answers a task beyond Options.MaxTasks.
func (st *taskStore) limitError() *Error {
	return errorf(CodeInternalError, "too many tasks: %d exist, the most this server keeps at once (--max-tasks); cancel some or wait for their ttl to pass, or call the tool without a task", st.max)
}

// add registers t, or refuses it when the store is full or closed.
func (st *taskStore) add(t *task) *Error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return errorf(CodeInternalError, "the server is shutting down: no new tasks")
	}
	if len(st.byID) >= st.max {
		return st.limitError()
	}
	st.seq++
	t.seq = st.seq
	st.byID[t.id] = t
	t.expiry = time.AfterFunc(t.ttl, func() { st.remove(t) })
	return nil
}

// get finds owner's task id; nil when there is none, or it is another's
// (which must look the same: 2025-11-25 "Task Isolation").
func (st *taskStore) get(id, owner string) *task {
	st.mu.Lock()
	defer st.mu.Unlock()
	t := st.byID[id]
	if t == nil || t.owner != owner {
		return nil
	}
	return t
}

// remove drops a task (its TTL passed, or its owner left) and stops its call.
func (st *taskStore) remove(t *task) {
	st.discard(t)
	t.stop("the task ended (its ttl passed, or its session ended)", false)
}

// page lists owner's tasks from creation number from on, oldest first, at
// most n; next is the creation number to go on from, 0 when there is none.
func (st *taskStore) page(owner string, from uint64, n int) (tasks []*task, next uint64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, t := range st.byID {
		if t.owner == owner && t.seq >= from {
			tasks = append(tasks, t)
		}
	}
	slices.SortFunc(tasks, func(a, b *task) int { return cmp.Compare(a.seq, b.seq) })
	if len(tasks) > n {
		next = tasks[n].seq
		tasks = tasks[:n]
	}
	return tasks, next
}

// closeOwner drops every task of owner (its session ended); "" closes
// every task and refuses new ones (the server is closing).
func (st *taskStore) closeOwner(owner string, all bool) {
	st.mu.Lock()
	var gone []*task
	for _, t := range st.byID {
		if all || t.owner == owner {
			gone = append(gone, t)
		}
	}
	if all {
		st.closed = true
	}
	st.mu.Unlock()
	for _, t := range gone {
		st.remove(t)
	}
}

// CloseTasks cancels every task and refuses new ones: nexus is ending, and
// no client could fetch their results.
func (s *Server) CloseTasks() { s.tasks.closeOwner("", true) }

type taskOwnerKey struct{}

// WithTaskOwner names who owns the tasks a stateless request creates and
// may see: over HTTP with auth, the identity the transport verified (an
// access token's issuer and subject), so that the same user's next token
// reaches them and no other user does. Requests of a session belong to the
// session whatever this says. Without it, stateless tasks are anyone's who
// knows their unguessable id.
func WithTaskOwner(ctx context.Context, owner string) context.Context {
	return context.WithValue(ctx, taskOwnerKey{}, owner)
}

func taskOwnerFrom(ctx context.Context) string {
	o, _ := ctx.Value(taskOwnerKey{}).(string)
	return o
}

var sessionSeq atomic.Uint64

// newSessionOwner names a session as a task owner.
func newSessionOwner() string { return "session:" + strconv.FormatUint(sessionSeq.Add(1), 10) }

// newTaskID returns 128 random bits in hex: unguessable, as a task id must
// be where nothing else guards it (2025-11-25 "Task Isolation").
func newTaskID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error()) // never happens on supported systems
	}
	return hex.EncodeToString(b[:])
}

// taskTool returns the tool a tools/call names and its task support, when
// that tool may run as a task. A tool the request's access refuses is none:
// its plain call answers the refusal, and no task is made.
func (s *Server) taskTool(ctx context.Context, r *Request) (*argmap.Tool, string) {
	raw, ok := r.param("name")
	if !ok {
		return nil, ""
	}
	name, ok := jsontext.DecodeString(raw)
	if !ok {
		return nil, ""
	}
	t := s.current().byName[name]
	if t == nil || !allowed(ctx, t) {
		return nil, ""
	}
	if support := argmap.TaskSupport(t.Command); support != argmap.TaskForbidden {
		return t, support
	}
	return t, ""
}

// hasHandshakeTasks reports whether a handshake version has tasks.
func hasHandshakeTasks(version string) bool {
	return version >= "2025-11-25" && version < StatelessVersion
}

// tasksCapability is the server's 2025-11-25 tasks capability: tasks/list,
// tasks/cancel and task-augmented tools/call.
func tasksCapability() map[string]any {
	return map[string]any{"list": map[string]any{}, "cancel": map[string]any{},
		"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
}

// taskParams is params.task of a 2025-11-25 tools/call.
type taskParams struct {
	TTL *float64 `json:"ttl"`
}

// handshakeToolCall serves a 2025-11-25 tools/call when tasks decide it:
// one with params.task (a task, or -32601 for a tool that forbids them),
// or one without for a tool that requires a task (-32601, the tool-level
// rule of basic/utilities/tasks). ok is false for a plain call.
func (ss *Session) handshakeToolCall(ctx context.Context, r *Request, c client) (result any, rpcErr *Error, ok bool) {
	srv := ss.srv
	raw, hasTask := r.param("task")
	hasTask = hasTask && string(raw) != "null"
	tool, support := srv.taskTool(ctx, r)
	if tool == nil {
		return nil, nil, false // a plain call reports the unknown tool
	}
	if !hasTask {
		if support == argmap.TaskRequired {
			return nil, errorf(CodeMethodNotFound, "tool '%s' must be called as a task (its execution.taskSupport is required): add params.task", tool.Name), true
		}
		return nil, nil, false
	}
	if support == "" {
		return nil, errorf(CodeMethodNotFound, "tool '%s' cannot be called as a task (its execution.taskSupport is forbidden): leave out params.task", tool.Name), true
	}
	var p taskParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, errorf(CodeInvalidParams, "invalid params: params.task must be an object with an optional number ttl (milliseconds): %v", err), true
	}
	ttl := defaultTaskTTL
	if p.TTL != nil {
		if *p.TTL <= 0 {
			return nil, errorf(CodeInvalidParams, "invalid params: params.task.ttl must be a positive number of milliseconds, got %v", *p.TTL), true
		}
		ttl = min(time.Duration(*p.TTL*float64(time.Millisecond)), maxTaskTTL)
	}
	view, rpcErr := srv.startTask(ctx, r, c, ss.taskOwner, false, ttl, ss.notify)
	if rpcErr != nil {
		return nil, rpcErr, true
	}
	return object{{Key: "task", Value: view}}, nil, true
}

// statelessToolCall serves a 2026-07-28 tools/call of a task-capable tool:
// a task when the client declares the extension (the server decides,
// SEP-2663: any task-supporting tool runs as one), -32021 for a tool that
// requires a task when it does not; ok is false for a plain call. A
// params.task of an older client is ignored. A "taskInput":"before" tool
// gets MRTR rounds first (taskinput.go).
func (s *Server) statelessToolCall(ctx context.Context, r *Request, c client) (result any, rpcErr *Error, ok bool) {
	tool, support := s.taskTool(ctx, r)
	if support == "" {
		return nil, nil, false
	}
	if missingCapabilities(tasksRequired, c.capabilities) != nil {
		if support == argmap.TaskRequired {
			return nil, &Error{Code: CodeMissingClientCapability,
				Message: fmt.Sprintf("tool '%s' runs only as a task: declare the %s extension in params._meta[%q].extensions", tool.Name, TasksExtension, MetaClientCapabilities),
				Data:    map[string]any{"requiredCapabilities": tasksRequired}}, true
		}
		return nil, nil, false
	}
	if taskInputBefore(tool) {
		res, rpcErr := s.composedToolCall(ctx, r, c) // taskinput.go: MRTR rounds, then a task
		return res, rpcErr, true
	}
	res, rpcErr := s.startTask(ctx, r, c, taskOwnerFrom(ctx), true, defaultTaskTTL, nil)
	if rpcErr != nil {
		return nil, rpcErr, true
	}
	res[0].Value = "task" // resultType: a CreateTaskResult, flat
	return append(res, member{Key: "_meta", Value: s.current().infoMeta}), nil, true
}

// startTask registers a task for the call r, starts it and returns the
// task as it was created (working: 2025-11-25 "Task Status Lifecycle"),
// for the CreateTaskResult. The call runs on its own goroutine, past the
// request that made it, until it returns or the task is cancelled,
// expires or loses its owner.
func (s *Server) startTask(ctx context.Context, r *Request, c client, owner string, stateless bool, ttl time.Duration, notify func(*Notification)) (object, *Error) {
	now := time.Now()
	t := &task{id: newTaskID(), owner: owner, stateless: stateless, created: now, ttl: ttl, notify: notify,
		capabilities: c.capabilities, done: make(chan struct{}), status: taskWorking, updated: now}
	// The call outlives its request: not its cancellation, but its values;
	// what it reports goes to the session, not to the request's stream.
	runCtx, cancel := context.WithCancel(withNotify(context.WithoutCancel(ctx), notify))
	t.cancel = cancel
	if rpcErr := s.tasks.add(t); rpcErr != nil {
		cancel()
		return nil, rpcErr
	}
	s.log.Debug("task created", "task", t.id, "ttl", ttl)
	view := t.view(stateless)
	c.task = t
	go func() {
		defer cancel()
		res, rpcErr := s.callTool(runCtx, r, c)
		var cr *CallToolResult
		if rpcErr == nil {
			cr, _ = res.(*CallToolResult)
		}
		t.finish(runCtx, cr, rpcErr)
		s.log.Debug("task ended", "task", t.id, "status", t.snapshotStatus())
	}()
	return view, nil
}

// finish stores the call's outcome and settles the status: a cancelled
// task stays cancelled (2025-11-25 "Task Cancellation"). In 2025-11-25 an
// isError result is a failed task; in the 2026-07-28 extension it is a
// completed one, and failed means the call did not produce a tool result
// (a JSON-RPC error, or its pool or nexus failed: SEP-2663 error semantics).
func (t *task) finish(ctx context.Context, res *CallToolResult, rpcErr *Error) {
	var ff FunctionFailure
	t.mu.Lock()
	t.result, t.rpcErr = res, rpcErr
	changed := !terminal(t.status)
	if changed {
		status, message := taskCompleted, ""
		switch {
		case rpcErr != nil:
			status, message = taskFailed, rpcErr.Message
		case t.callErr != nil && OutcomeOf(ctx, t.callErr) == OutcomeCancelled:
			status, message = taskCancelled, "the call was cancelled"
		case t.stateless && t.callErr != nil && OutcomeOf(ctx, t.callErr) == OutcomeError && !(errors.As(t.callErr, &ff) && ff.FunctionFailed()):
			status, message = taskFailed, t.callErr.Error()
			t.result, t.rpcErr = nil, &Error{Code: CodeInternalError, Message: message}
		case res != nil && res.IsError:
			message = resultText(res)
			if !t.stateless {
				status = taskFailed
			}
		}
		t.status, t.message, t.updated = status, message, time.Now()
	}
	t.inputs = nil
	t.mu.Unlock()
	if changed {
		t.statusChanged() // before the result can be fetched: no status arrives after it
	}
	close(t.done)
}

// resultText is the text of a result's first text block.
func resultText(res *CallToolResult) string {
	if len(res.Content) > 0 {
		switch b := res.Content[0].(type) {
		case *textBlock:
			return b.Text
		case valueText:
			return string(b)
		}
	}
	return ""
}

// stop cancels the task's call; a task still running becomes cancelled,
// which the client is told when notify (it is not when it is gone).
func (t *task) stop(message string, notify bool) bool {
	t.mu.Lock()
	live := !terminal(t.status)
	if live {
		t.status, t.message, t.updated = taskCancelled, message, time.Now()
	}
	t.mu.Unlock()
	t.cancel()
	if live && notify {
		t.statusChanged()
	}
	return live
}

func (t *task) snapshotStatus() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status
}

// statusChanged sends notifications/tasks/status (2025-11-25): the whole
// task, without related-task _meta.
func (t *task) statusChanged() {
	if t.notify != nil {
		t.notify(&Notification{Method: "notifications/tasks/status", Params: t.view(false)})
	}
}

// timestamp writes an ISO 8601 time, as createdAt and lastUpdatedAt are.
func timestamp(at time.Time) string { return at.UTC().Format("2006-01-02T15:04:05.000Z") }

// view is the task's wire object: 2025-11-25's Task, or (stateless) the
// 2026-07-28 DetailedTask: resultType first, then the result or error once
// terminal, or the questions waiting while input_required.
func (t *task) view(stateless bool) object {
	t.mu.Lock()
	defer t.mu.Unlock()
	var o object
	if stateless {
		o = append(o, member{Key: "resultType", Value: "complete"})
	}
	o = append(o, member{Key: "taskId", Value: t.id}, member{Key: "status", Value: t.status})
	if t.message != "" {
		o = append(o, member{Key: "statusMessage", Value: t.message})
	}
	o = append(o, member{Key: "createdAt", Value: timestamp(t.created)}, member{Key: "lastUpdatedAt", Value: timestamp(t.updated)})
	if !stateless {
		return append(o, member{Key: "ttl", Value: t.ttl.Milliseconds()}, member{Key: "pollInterval", Value: taskPollInterval.Milliseconds()})
	}
	o = append(o, member{Key: "ttlMs", Value: t.ttl.Milliseconds()}, member{Key: "pollIntervalMs", Value: taskPollInterval.Milliseconds()})
	switch {
	case t.status == taskCompleted && t.result != nil:
		o = append(o, member{Key: "result", Value: t.result})
	case t.status == taskFailed && t.rpcErr != nil:
		o = append(o, member{Key: "error", Value: t.rpcErr})
	case t.status == taskInputRequired && len(t.inputs) > 0:
		keys := make([]string, 0, len(t.inputs))
		for k := range t.inputs {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		reqs := make(object, 0, len(keys))
		for _, k := range keys {
			reqs = append(reqs, member{Key: k, Value: t.inputs[k].request})
		}
		o = append(o, member{Key: "inputRequests", Value: reqs})
	}
	return o
}

// ask returns the Ask a task's call gets, in place of the inner one the
// call would have had.
func (t *task) ask(inner askFunc) askFunc {
	if t.compose != nil {
		return t.compose.ask(inner)
	}
	if t.stateless {
		return t.askByUpdate
	}
	return func(ctx context.Context, q Question) (json.RawMessage, error) {
		if inner == nil {
			return nil, errors.New("this call cannot ask the client")
		}
		var err error
		if q.Params, err = withRelatedTask(q.Params, t.id); err != nil {
			return nil, err
		}
		t.asked(1)
		defer t.asked(-1)
		return inner(ctx, q)
	}
}

// asked counts a question going out (+1) or answered (-1): the task is
// input_required while any is outstanding (2025-11-25 "Input Required
// Status"), and says so to the client.
func (t *task) asked(delta int) {
	t.mu.Lock()
	t.asking += delta
	changed := false
	switch {
	case t.asking > 0 && t.status == taskWorking:
		t.status, changed = taskInputRequired, true
	case t.asking == 0 && t.status == taskInputRequired:
		t.status, changed = taskWorking, true
	}
	if changed {
		t.updated = time.Now()
	}
	t.mu.Unlock()
	if changed {
		t.statusChanged()
	}
}

// withRelatedTask adds _meta["io.modelcontextprotocol/related-task"] to a
// request's params (2025-11-25 "Associating Task-Related Messages").
func withRelatedTask(params json.RawMessage, id string) (json.RawMessage, error) {
	var p map[string]json.RawMessage
	if len(params) > 0 && !isNull(params) {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, fmt.Errorf("the request's params are not a JSON object: %w", err)
		}
	}
	if p == nil {
		p = map[string]json.RawMessage{}
	}
	var meta map[string]json.RawMessage
	if raw, ok := p["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
		meta = nil
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[metaRelatedTask], _ = json.Marshal(map[string]string{"taskId": id})
	var err error
	if p["_meta"], err = json.Marshal(meta); err != nil {
		return nil, err
	}
	return marshalCompact(p)
}

// askByUpdate puts a question of a 2026-07-28 task in inputRequests, under
// a name stable for the task ("elicitation-1", ...), holds the task in
// input_required, and waits for tasks/update to bring its answer. The
// function stays suspended here meanwhile: tasks are node-local.
func (t *task) askByUpdate(ctx context.Context, q Question) (json.RawMessage, error) {
	k, err := askable(q.Kind, StatelessVersion, t.capabilities)
	if err != nil {
		return nil, err
	}
	params := q.Params
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	in := &pendingInput{request: object{{Key: "method", Value: k.method}, {Key: "params", Value: json.RawMessage(params)}},
		answer: make(chan json.RawMessage, 1)}
	t.mu.Lock()
	if terminal(t.status) {
		t.mu.Unlock()
		return nil, context.Canceled
	}
	t.nextInput++
	key := q.Key
	if key == "" {
		key = k.capability + "-" + strconv.Itoa(t.nextInput)
	}
	if t.inputs == nil {
		t.inputs = map[string]*pendingInput{}
	}
	t.inputs[key] = in
	t.status, t.updated = taskInputRequired, time.Now()
	t.mu.Unlock()
	select {
	case a := <-in.answer:
		return a, nil
	case <-ctx.Done():
		t.mu.Lock()
		delete(t.inputs, key)
		t.mu.Unlock()
		return nil, ctx.Err()
	}
}

// update delivers answers to waiting questions (keys no question has are
// ignored) and returns the task to working once none is left.
func (t *task) update(answers map[string]json.RawMessage) {
	t.mu.Lock()
	for k, a := range answers {
		if in := t.inputs[k]; in != nil {
			delete(t.inputs, k)
			in.answer <- a
		}
	}
	if len(t.inputs) == 0 && t.status == taskInputRequired {
		t.status, t.updated = taskWorking, time.Now()
	}
	t.mu.Unlock()
}

// taskIDParams are the params of tasks/get, tasks/result, tasks/cancel and
// tasks/update.
type taskIDParams struct {
	TaskID         *string                    `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

// findTask reads params.taskId and finds the owner's task; an unknown id,
// or another's, is -32602 (2025-11-25 "Protocol Errors").
func (s *Server) findTask(method string, params json.RawMessage, owner string) (*task, taskIDParams, *Error) {
	var p taskIDParams
	if err := json.Unmarshal(params, &p); err != nil || p.TaskID == nil {
		return nil, p, errorf(CodeInvalidParams, "invalid %s params: params.taskId must be a string (the taskId of a task this client created)", method)
	}
	t := s.tasks.get(*p.TaskID, owner)
	if t == nil {
		return nil, p, errorf(CodeInvalidParams, "unknown task '%s': no such task, or it expired (tasks live for their ttl)", *p.TaskID)
	}
	return t, p, nil
}

// isTaskMethod reports whether method is one of the tasks/* requests.
func isTaskMethod(method string) bool { return strings.HasPrefix(method, "tasks/") }

// handshakeTaskMethod serves tasks/* in a 2025-11-25 session.
func (ss *Session) handshakeTaskMethod(ctx context.Context, r *Request, version string) (any, *Error) {
	srv := ss.srv
	if !hasHandshakeTasks(version) || !srv.tasksEnabled() || r.Method == "tasks/update" {
		return nil, errorf(CodeMethodNotFound, "method not found: %s", r.Method)
	}
	if r.Method == "tasks/list" {
		return srv.listTasks(r.Params, ss.taskOwner)
	}
	t, _, rpcErr := srv.findTask(r.Method, r.Params, ss.taskOwner)
	if rpcErr != nil {
		return nil, rpcErr
	}
	switch r.Method {
	case "tasks/get":
		return t.view(false), nil
	case "tasks/result":
		select {
		case <-t.done:
		case <-ctx.Done():
			return nil, errorf(CodeInternalError, "tasks/result for task '%s' ended before the task did: %v", t.id, context.Cause(ctx))
		}
		t.mu.Lock()
		res, rpcErr := t.result, t.rpcErr
		t.mu.Unlock()
		if rpcErr != nil {
			return nil, rpcErr
		}
		// Exactly the call's result, tied to its task.
		withMeta := *res
		withMeta.Meta, _ = marshalCompact(map[string]any{metaRelatedTask: map[string]string{"taskId": t.id}})
		return &withMeta, nil
	case "tasks/cancel":
		if !t.stop("The task was cancelled by request.", true) {
			return nil, errorf(CodeInvalidParams, "cannot cancel task '%s': already in terminal status '%s'", t.id, t.snapshotStatus())
		}
		return t.view(false), nil
	}
	return nil, errorf(CodeMethodNotFound, "method not found: %s", r.Method)
}

const taskCursorPrefix = "nt1."

// listTasks answers tasks/list: the owner's tasks, oldest first, a page at
// a time. The cursor is the creation number to go on from.
func (s *Server) listTasks(params json.RawMessage, owner string) (any, *Error) {
	var p listParams
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, errorf(CodeInvalidParams, "invalid tasks/list params: %v", err)
		}
	}
	from := uint64(0)
	if p.Cursor != nil {
		raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(*p.Cursor, taskCursorPrefix))
		if err == nil && strings.HasPrefix(*p.Cursor, taskCursorPrefix) {
			from, err = strconv.ParseUint(string(raw), 10, 64)
		}
		if err != nil || from == 0 {
			return nil, errorf(CodeInvalidParams, "invalid params: unknown cursor %q (use the nextCursor of a previous tasks/list)", *p.Cursor)
		}
	}
	tasks, next := s.tasks.page(owner, from, s.opts.PageSize)
	views := make([]object, len(tasks))
	for i, t := range tasks {
		views[i] = t.view(false)
	}
	res := object{{Key: "tasks", Value: views}}
	if next != 0 {
		res = append(res, member{Key: "nextCursor", Value: taskCursorPrefix + base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatUint(next, 10)))})
	}
	return res, nil
}

// statelessTaskMethod serves tasks/get, tasks/update and tasks/cancel of
// the 2026-07-28 extension, which the request must declare (-32021).
func (s *Server) statelessTaskMethod(ctx context.Context, r *Request, m statelessMeta) (any, *Error) {
	if missingCapabilities(tasksRequired, m.capabilities) != nil {
		return nil, &Error{Code: CodeMissingClientCapability,
			Message: fmt.Sprintf("%s needs the %s extension: declare it in params._meta[%q].extensions", r.Method, TasksExtension, MetaClientCapabilities),
			Data:    map[string]any{"requiredCapabilities": tasksRequired}}
	}
	t, p, rpcErr := s.findTask(r.Method, r.Params, taskOwnerFrom(ctx))
	if rpcErr != nil {
		return nil, rpcErr
	}
	switch r.Method {
	case "tasks/get":
		return append(t.view(true), member{Key: "_meta", Value: s.current().infoMeta}), nil
	case "tasks/update":
		if raw, ok := r.param("inputResponses"); !ok || jsonKind(raw) != "object" {
			return nil, errorf(CodeInvalidParams, "invalid tasks/update params: params.inputResponses must be an object of answers keyed as the task's inputRequests")
		}
		t.update(p.InputResponses)
	case "tasks/cancel":
		t.stop("The task was cancelled by request.", false) // a terminal task: the same ack (SEP-2663)
	}
	return s.statelessResult(nil), nil
}
