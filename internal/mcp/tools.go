package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/jsontext"
)

// toolView is what a protocol version shows of a tool.
func toolView(f features) argmap.ToolView {
	return argmap.ToolView{Title: f.title, OutputSchema: f.structured, Annotations: f.annotations, Execution: f.execution}
}

// listTools answers tools/list: one page of tools in manifest order (a
// deterministic order, so clients can cache), as the version shows them.
func (s *Server) listTools(ctx context.Context, params json.RawMessage, version string) (any, *Error) {
	var p listParams
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, errorf(CodeInvalidParams, "invalid tools/list params: %v", err)
		}
	}
	sf := s.current()
	tools := visible(ctx, sf.tools, func(t *argmap.Tool) *argmap.Tool { return t })
	start, end, rpcErr := s.pageOf(sf, "tools/list", p, len(tools))
	if rpcErr != nil {
		return nil, rpcErr
	}
	f := featuresOf(version)
	view := toolView(f)
	page := make([]argmap.Object, 0, end-start)
	for _, t := range tools[start:end] {
		page = append(page, t.Object(view))
	}
	return s.listResult(ctx, sf, "tools/list", object{{Key: "tools", Value: page}}, end, len(tools), version, s.opts.CacheTTL.Milliseconds()), nil
}

// cursorPrefix starts every list cursor (pageOf); clients must treat a
// cursor as opaque.
const cursorPrefix = "nx1."

// ToolsPayload is the tools/list result, as `--mcp-tools` prints it: every
// tool, every member.
func (s *Server) ToolsPayload() any {
	tools := s.current().tools
	if tools == nil {
		tools = []*argmap.Tool{}
	}
	return &struct {
		Tools []*argmap.Tool `json:"tools"`
	}{tools}
}

type callToolParams struct {
	Name      *string         `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      struct {
		ProgressToken json.RawMessage `json:"progressToken"`
	} `json:"_meta"`
}

// textBlock is an MCP text content block.
type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func textContent(text string) []any { return []any{&textBlock{Type: "text", Text: text}} }

// valueText is the text block of a value's JSON text, kept as the bytes
// ResultValue wrote: a large value is escaped once, straight into the
// reply, never copied into a string.
type valueText []byte

func (v valueText) appendJSON(b []byte) []byte {
	b = append(b, `{"type":"text","text":`...)
	b = jsontext.AppendString(b, v)
	return append(b, '}')
}

func (v valueText) MarshalJSON() ([]byte, error) { return v.appendJSON(nil), nil }

// CallToolResult is the result of tools/call, keys in docs/spec.md §4.7's
// order; resultType and _meta only in 2026-07-28.
type CallToolResult struct {
	// Content holds the content blocks: text blocks, or those the function
	// answered with (raw JSON objects).
	Content           []any           `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError"`
	ResultType        string          `json:"resultType,omitempty"`
	Meta              json.RawMessage `json:"_meta,omitempty"`

	// one backs Content when it is the value's one text block: no slice
	// of its own for every call.
	one [1]any
}

// appendJSON writes the result as encoding/json would, without its
// reflection and without the check it makes of every MarshalJSON's output,
// which would read a large value twice more.
func (r *CallToolResult) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"content":[`...)
	for i, c := range r.Content {
		if i > 0 {
			b = append(b, ',')
		}
		switch x := c.(type) {
		case valueText:
			b = x.appendJSON(b)
		case lazyText:
			b = x.appendJSON(b)
		case *textBlock:
			b = valueText(x.Text).appendJSON(b)
		default:
			enc, err := marshalCompact(x)
			if err != nil {
				return nil, err
			}
			b = append(b, enc...)
		}
	}
	b = append(b, ']')
	if len(r.StructuredContent) > 0 {
		b = append(b, `,"structuredContent":`...)
		b = append(b, r.StructuredContent...) // compact: ResultValue wrote it
	}
	b = append(b, `,"isError":`...)
	b = strconv.AppendBool(b, r.IsError)
	if r.ResultType != "" {
		b = append(b, `,"resultType":`...)
		b = jsontext.AppendString(b, []byte(r.ResultType))
	}
	if len(r.Meta) > 0 {
		b = append(b, `,"_meta":`...)
		b = append(b, r.Meta...)
	}
	return append(b, '}'), nil
}

// sizeHint is about the size of the result's JSON: the value's text, a
// tenth more for its escapes, and its structured copy.
func (r *CallToolResult) sizeHint() int {
	n := len(r.StructuredContent)
	for _, c := range r.Content {
		switch v := c.(type) {
		case valueText:
			n += len(v) + len(v)/10
		case lazyText:
			n += v.v.Size() + v.v.Size()/10
		}
	}
	return n
}

func errorResult(msg string) *CallToolResult {
	return &CallToolResult{Content: textContent(msg), IsError: true}
}

// client is what a tools/call knows of the client that sent it.
type client struct {
	version string
	// logLevel tells the threshold for log messages ("" sends none).
	logLevel func() string
	// capabilities are the client's declared capabilities (a JSON object).
	capabilities json.RawMessage
	// session, in the handshake era, is where a function's questions go
	// as server requests; nil for a stateless request, whose questions end
	// the call with input_required (mrtr.go).
	session *Session
	// task is the task the call runs as, nil for a plain call.
	task *task
}

// callTool answers tools/call.
func (s *Server) callTool(ctx context.Context, r *Request, c client) (any, *Error) {
	var res *CallToolResult
	var rpcErr *Error
	var o observed
	if s.opts.OnCall == nil {
		res, rpcErr = s.runTool(ctx, r, c, &o)
	} else {
		start := time.Now()
		res, rpcErr = s.runTool(ctx, r, c, &o)
		switch {
		case rpcErr != nil:
			o.outcome = OutcomeProtocolError
		case o.input != nil:
			o.outcome = OutcomeInputRequired
		case o.outcome == "" && res.IsError:
			o.outcome = OutcomeError // a result nexus could not read, or wrong-typed
		case o.outcome == "":
			o.outcome = OutcomeOK
		}
		s.opts.OnCall(o.tool, o.outcome, time.Since(start))
	}
	if rpcErr != nil {
		return nil, rpcErr
	}
	if o.input != nil {
		return o.input, nil
	}
	if featuresOf(c.version).stateless {
		res.ResultType = "complete"
		res.Meta = s.current().infoMeta
	}
	return res, nil
}

// toolCallParams reads tools/call's params from the request's members
// without decoding the arguments; anything unusual goes to encoding/json,
// whose error the client then sees.
func toolCallParams(r *Request) (callToolParams, error) {
	var p callToolParams
	name, hasName := r.param("name")
	meta, hasMeta := r.param("_meta")
	plainName := !hasName || (len(name) > 0 && name[0] == '"') || string(name) == "null"
	plainMeta := !hasMeta || (len(meta) > 0 && meta[0] == '{') || string(meta) == "null"
	if !plainName || !plainMeta {
		return unmarshalToolCallParams(r.Params)
	}
	if hasName && string(name) != "null" {
		n, ok := jsontext.DecodeString(name)
		if !ok {
			return unmarshalToolCallParams(r.Params)
		}
		p.Name = &n
	}
	p.Arguments, _ = r.param("arguments")
	if hasMeta && string(meta) != "null" {
		for _, m := range paramMembers(meta) {
			if m.Key == "progressToken" {
				p.Meta.ProgressToken = m.Value.(json.RawMessage)
			}
		}
	}
	return p, nil
}

// unmarshalToolCallParams is toolCallParams by encoding/json. Apart, so
// that the common path's params do not escape to the heap with these.
func unmarshalToolCallParams(params json.RawMessage) (callToolParams, error) {
	var p callToolParams
	err := json.Unmarshal(params, &p)
	return p, err
}

// observed is what runTool tells Options.OnCall: the tool, once known, and
// how its call ended where the result alone does not say.
type observed struct {
	tool    string
	outcome Outcome
	// input, when set, is the call's answer in place of a result: the
	// function asked what a stateless client must answer (MRTR).
	input object
}

func (s *Server) runTool(ctx context.Context, r *Request, c client, obs *observed) (res *CallToolResult, rpcErr *Error) {
	var unchecked json.RawMessage // arguments skipped over when the line was read
	if r.unchecked {
		// A call that reads them whole has checked them; one that fails
		// before may have failed because they are not JSON, and then the
		// whole message is a parse error, as it would have been at once.
		unchecked, _ = r.param("arguments")
		defer func() {
			if rpcErr != nil && unchecked != nil {
				if perr := checkArguments(unchecked); perr != nil {
					res, rpcErr = nil, perr
				}
			}
		}()
	}
	p, err := toolCallParams(r)
	if err != nil {
		return nil, errorf(CodeInvalidParams, "invalid tools/call params: %v", err)
	}
	if p.Name == nil {
		return nil, errorf(CodeInvalidParams, "invalid tools/call params: missing tool name (params.name must be a string)")
	}
	// The call holds its generation of the surface to the end: a reload
	// meanwhile leaves its tool, caller and pools as they were.
	gen := s.surface.Acquire()
	defer gen.Release()
	sf := &gen.Value
	tool := sf.byName[*p.Name]
	if tool == nil {
		return nil, errorf(CodeInvalidParams, "unknown tool '%s'", *p.Name)
	}
	obs.tool = tool.Name
	if rpcErr := refusal(ctx, tool, "tool '"+tool.Name+"'"); rpcErr != nil {
		return nil, rpcErr
	}
	if missing := missingCapabilities(tool.Command.Metadata["requiredClientCapabilities"], c.capabilities); missing != nil {
		names := make([]string, 0, len(missing))
		for k := range missing {
			names = append(names, k)
		}
		slices.Sort(names)
		return nil, &Error{Code: CodeMissingClientCapability,
			Message: fmt.Sprintf("tool '%s' needs client capabilities the client did not declare: %s", tool.Name, strings.Join(names, ", ")),
			Data:    map[string]any{"requiredCapabilities": missing}}
	}
	call, err := tool.ToPositional(p.Arguments)
	if err != nil {
		return nil, errorf(CodeInvalidParams, "%s", err.Error())
	}
	unchecked = nil // read whole, so valid; and it must not keep the line in memory
	version, logLevel := c.version, c.logLevel
	f := featuresOf(version)
	var round *inputRound
	if f.stateless {
		if round, rpcErr = s.openRound(r, tool.Name, p.Arguments, c.capabilities); rpcErr != nil {
			return nil, rpcErr
		}
	}
	// The arguments are in the call now; what is kept of params is copied.
	token := bytes.Clone(p.Meta.ProgressToken)
	p = callToolParams{}
	r.releaseParams()
	notify := notifierFrom(ctx)
	blocks := &contentSink{}
	hooks := CallHooks{
		Log:     s.functionLogger(tool.Name, notify, logLevel),
		Content: blocks.set,
	}
	if len(token) > 0 && string(token) != "null" {
		hooks.Progress = progressNotifier(notify, token, f.progressMessage)
	}
	callCtx, cancel := askThrough(ctx, round, c, &hooks)
	defer cancel()
	cmd := call.Command
	if c.task != nil {
		hooks.Ask = c.task.ask(hooks.Ask) // tasks.go: the task's status follows the function's questions
	}
	hooks.Inline = inlineFor(ctx, sf.caller)
	raw, err := sf.caller.Call(callCtx, call, hooks)
	if round != nil && ctx.Err() == nil && round.needsInput() {
		// SEP-2322: the function asked what only the client can answer.
		if obs.input, err = s.inputRequired(round); err != nil {
			return errorResult("call to '" + tool.Name + "' asked the client something nexus could not pass on: " + err.Error()), nil
		}
		return nil, nil
	}
	if err != nil {
		if c.task != nil {
			c.task.callErr = err
		}
		outcome := OutcomeOf(ctx, err)
		obs.outcome = outcome
		if outcome == OutcomeCancelled {
			return errorResult("call to '" + tool.Name + "' was cancelled"), nil
		}
		s.callFailed(tool.Name, err, notify, logLevel)
		// docs/spec.md §4.4: a function that raises or a pool that fails is
		// a result, not a protocol error.
		return errorResult(err.Error()), nil
	}
	content := blocks.get()
	res = &CallToolResult{}
	structured := f.structured && tool.OutputSchema != nil && cmd == tool.Command
	fr := sf.catalog.fileResult(cmd)
	// MCP Apps (apps.go): a client shown views gets the data its view draws.
	viewed := cmd == tool.Command && fr == nil && cmd.Return.Mime == "" && sf.views[tool.Name] != nil && s.showsViews(c.capabilities)
	var value json.RawMessage
	if len(content) == 0 && len(raw.Arrays) > 0 && valueSize(raw) >= streamMin && fr == nil && cmd.Return.Mime == "" && !structured && !viewed {
		// Only the client reads the text: it is written from the pool's
		// arrays as the reply goes out (stream.go), never whole beside
		// them; the type is checked now, before anything is sent.
		collectIfLarge(valueSize(raw)) // the arguments' buffers are garbage now
		lazy, err := argmap.LazyResultValue(&cmd.Return, raw)
		if err != nil {
			return s.unreadableResult(tool.Name, err), nil
		}
		res.Content = []any{lazyText{lazy}}
		return res, nil
	}
	if len(content) == 0 || !isNull(raw.JSON) || len(raw.Arrays) > 0 {
		collectIfLarge(valueSize(raw)) // the arguments' buffers are garbage now
		if value, err = argmap.ResultValue(&cmd.Return, raw); err != nil {
			return s.unreadableResult(tool.Name, err), nil
		}
		collectIfLarge(len(value)) // and now the pool's result
	}
	if len(content) > 0 {
		if res.Content, err = contentFor(content, f, sf.resourceURI(tool.Name)); err != nil {
			return errorResult("tool '" + tool.Name + "' returned content nexus cannot read: " + err.Error()), nil
		}
	} else if fr != nil {
		// The function wrote a file; the client gets a link to it
		// (docs/spec.md §6.1).
		if res.Content, err = s.fileLink(fr, value, f, c.session, notify); err != nil {
			return errorResult("tool '" + tool.Name + "' returns a file, but " + err.Error()), nil
		}
	} else if mime := cmd.Return.Mime; mime != "" {
		if res.Content, err = mimeContent(value, mime, f, sf.resourceURI(tool.Name)); err != nil {
			return errorResult("tool '" + tool.Name + "' returned " + mime + " that nexus cannot read: " + err.Error()), nil
		}
	} else {
		res.one[0] = valueText(value)
		res.Content = res.one[:]
	}
	// docs/spec.md §4.7: a record return also fills structuredContent, matching
	// outputSchema; both came with 2025-06-18.
	if structured && value != nil && !isNull(value) {
		res.StructuredContent = value
	} else if viewed {
		res.StructuredContent = sf.viewData(tool.Name, value)
	}
	return res, nil
}

// unreadableResult is the error result of a call whose value does not
// have its declared type, or cannot be read.
func (s *Server) unreadableResult(tool string, err error) *CallToolResult {
	var tm *argmap.TypeMismatch
	if errors.As(err, &tm) {
		// docs/spec.md §4.7: a result is checked against its declared type.
		return errorResult("'" + tool + "' returned " + tm.Error())
	}
	return errorResult("tool '" + tool + "' returned a value nexus cannot read: " + err.Error())
}

// contentSink keeps the content blocks a function answered with (the
// Content hook), for the call to read once the function has returned.
type contentSink struct {
	mu     sync.Mutex
	blocks json.RawMessage
}

func (c *contentSink) set(b json.RawMessage) {
	c.mu.Lock()
	c.blocks = b
	c.mu.Unlock()
}

func (c *contentSink) get() json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.blocks
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// CodeMissingClientCapability answers a call of a tool whose command needs
// a client capability (metadata.requiredClientCapabilities) the client did
// not declare (2026-07-28; nexus uses it in every era).
const CodeMissingClientCapability = -32021

// missingCapabilities returns the parts of required (a ClientCapabilities
// object from a command's metadata) that declared lacks, nil when none: a
// required key must be declared, and so must each of its own keys.
func missingCapabilities(required, declared json.RawMessage) map[string]json.RawMessage {
	if len(required) == 0 {
		return nil // most commands: no decoding (and no error made) per call
	}
	var req, dec map[string]json.RawMessage
	if json.Unmarshal(required, &req) != nil || len(req) == 0 {
		return nil
	}
	if json.Unmarshal(declared, &dec) != nil {
		dec = nil
	}
	var missing map[string]json.RawMessage
	for k, v := range req {
		d, ok := dec[k]
		if !ok || isNull(d) || (jsonKind(v) == "object" && missingCapabilities(v, d) != nil) {
			if missing == nil {
				missing = map[string]json.RawMessage{}
			}
			missing[k] = v
		}
	}
	return missing
}

// resourceURI names the embedded resource a tool answers with, when its
// bytes have no block of their own.
func (sf *surface) resourceURI(tool string) string {
	return "nexus://" + url.PathEscape(sf.info.Name) + "/" + url.PathEscape(tool) + "/result"
}

type mediaBlock struct {
	Type     string `json:"type"`
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
}

type resourceBlock struct {
	Type     string           `json:"type"`
	Resource resourceContents `json:"resource"`
}

type resourceContents struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType,omitempty"`
	Blob     string `json:"blob"`
}

func blobResource(uri, mime, data string) *resourceBlock {
	return &resourceBlock{Type: "resource", Resource: resourceContents{URI: uri, MimeType: mime, Blob: data}}
}

// mimeContent turns a `mime` return (the bytes, base64 in a JSON string)
// into one content block (docs/spec.md §4.7): image/* an image, audio/* audio
// (an embedded resource before 2025-03-26, which has no audio blocks),
// text/* text when it is UTF-8, anything else an embedded resource blob.
func mimeContent(value json.RawMessage, mime string, f features, uri string) ([]any, error) {
	var data string
	if err := json.Unmarshal(value, &data); err != nil {
		return nil, fmt.Errorf("expected base64 bytes in a JSON string, got %s", jsonKind(value))
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return nil, fmt.Errorf("not base64: %v", err)
	}
	major, _, _ := strings.Cut(mime, "/")
	switch {
	case major == "image":
		return []any{&mediaBlock{Type: "image", Data: data, MimeType: mime}}, nil
	case major == "audio" && f.annotations:
		return []any{&mediaBlock{Type: "audio", Data: data, MimeType: mime}}, nil
	case major == "text" && utf8.Valid(raw):
		return textContent(string(raw)), nil
	}
	return []any{blobResource(uri, mime, data)}, nil
}

// contentFor passes a function's content blocks on as the version knows
// them: audio before 2025-03-26 becomes an embedded resource blob, and a
// resource_link before 2025-06-18 a text block naming its URI.
func contentFor(blocks json.RawMessage, f features, uri string) ([]any, error) {
	type head struct {
		Type     string `json:"type"`
		Data     string `json:"data"`
		MimeType string `json:"mimeType"`
		URI      string `json:"uri"`
	}
	return mapBlocks(blocks, func(b json.RawMessage, h head) (any, error) {
		switch {
		case h.Type == "audio" && !f.annotations:
			return blobResource(uri, h.MimeType, h.Data), nil
		case h.Type == "resource_link" && !f.title:
			return &textBlock{Type: "text", Text: h.URI}, nil
		}
		return b, nil
	})
}

// mapBlocks maps each of a function's content blocks (a JSON array of
// objects) to an R, given the block and the fields of it H reads.
func mapBlocks[H, R any](blocks json.RawMessage, each func(json.RawMessage, H) (R, error)) ([]R, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(blocks, &raw); err != nil {
		return nil, err
	}
	out := make([]R, 0, len(raw))
	for _, b := range raw {
		var h H
		if err := json.Unmarshal(b, &h); err != nil {
			return nil, err
		}
		r, err := each(b, h)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// callFailed tells the client that asked for log messages why a call
// failed (a pool that died, a timeout, a function that raised) at level
// "warning", besides the isError result.
func (s *Server) callFailed(tool string, err error, notify func(*Notification), logLevel func() string) {
	data := map[string]any{"message": "call to '" + tool + "' failed", "tool": tool, "error": err.Error()}
	var t interface{ Timeout() bool }
	if errors.As(err, &t) && t.Timeout() {
		data["timeout"] = true
	}
	if admits(logLevel(), "warning") {
		notify(logMessage("warning", "nexus", data))
	}
}

// functionLogger forwards the log records a running function writes
// (nexus.log in the runtimes) to the client as notifications/message when
// the level admits them, and always to stderr.
func (s *Server) functionLogger(tool string, notify func(*Notification), logLevel func() string) func(string, json.RawMessage) {
	return func(level string, data json.RawMessage) {
		if levelRank(level) < 0 {
			level = "info"
		}
		s.log.Debug("function log", "tool", tool, "level", level, "data", string(data))
		if admits(logLevel(), level) {
			var v any = data
			if len(data) == 0 {
				v = nil
			}
			notify(logMessage(level, tool, v))
		}
	}
}

type progressParams struct {
	ProgressToken json.RawMessage `json:"progressToken"`
	Progress      float64         `json:"progress"`
	Total         *float64        `json:"total,omitempty"`
	Message       string          `json:"message,omitempty"`
}

// progressNotifier sends notifications/progress for one call. MCP wants
// progress to increase with every notification, so a report that does not
// is dropped.
func progressNotifier(notify func(*Notification), token json.RawMessage, withMessage bool) func(float64, *float64, string) {
	last, started := 0.0, false
	return func(progress float64, total *float64, message string) {
		if started && progress <= last {
			return
		}
		last, started = progress, true
		if !withMessage {
			message = ""
		}
		notify(&Notification{Method: "notifications/progress", Params: &progressParams{
			ProgressToken: token, Progress: progress, Total: total, Message: message,
		}})
	}
}

// resourceLink is an MCP resource_link content block.
type resourceLink struct {
	Type        string `json:"type"`
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
	Size        *int64 `json:"size,omitempty"`
}

// fileLink serves the file a file-result command returned (value: its
// path, a JSON string) and links to it. A file new to the resources is
// announced to the clients that listed them.
func (s *Server) fileLink(fr *fileSource, value json.RawMessage, f features, calling *Session, notify func(*Notification)) ([]any, error) {
	var path string
	if err := json.Unmarshal(value, &path); err != nil {
		return nil, fmt.Errorf("it returned %s, not a path", jsonKind(value))
	}
	pf, err := s.fileFrom(fr, path)
	if err != nil {
		return nil, err
	}
	if s.files.add(pf) {
		s.resourceAdded(calling, notify)
	}
	link := &resourceLink{Type: "resource_link", URI: pf.uri, Name: pf.name, MimeType: pf.mimeType, Size: fileSize(pf.path),
		Description: "A file the function wrote; read it with resources/read"}
	if !f.title { // resource_link came with 2025-06-18
		return textContent(pf.uri), nil
	}
	return []any{link}, nil
}
