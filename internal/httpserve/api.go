package httpserve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/mcp"
)

// The plain JSON API (docs/spec.md §5) answers {"status":"ok","result":...}
// or {"status":"error","error":"..."}.
type apiReply struct {
	Status string          `json:"status"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

func apiError(w http.ResponseWriter, status int, format string, a ...any) {
	writeJSON(w, status, &apiReply{Status: "error", Error: fmt.Sprintf(format, a...)})
}

// serveHealth answers liveness probes, without auth and without details.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		apiError(w, http.StatusMethodNotAllowed, "method not allowed: %s (use GET)", r.Method)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// serveCall runs POST /call/<module>/<command> with a JSON array of
// positional arguments, one per manifest argument in order (or
// {"args":[...]}); trailing ones may be left out and a null stands for an
// argument left out, which takes its default.
// Status: 200 with the result; 400 for a body that is not such a call; 404
// for an unknown module or command; 500 when the function raised; 502
// when its pool failed; 499-like cancellations never reach a client.
func (s *Server) serveCall(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		apiError(w, http.StatusMethodNotAllowed, "method not allowed: %s (use POST)", r.Method)
		return
	}
	rest := strings.TrimPrefix(r.URL.Path, "/call/")
	module, command, ok := strings.Cut(rest, "/")
	if !ok || module == "" || command == "" || strings.Contains(command, "/") {
		apiError(w, http.StatusNotFound, "not found: use /call/<module>/<command>")
		return
	}
	// The call holds its generation of the programs to the end: a reload
	// meanwhile leaves its pools running until it is done.
	gen := s.served.Acquire()
	defer gen.Release()
	st := &gen.Value
	p := st.byModule[module]
	if p == nil {
		apiError(w, http.StatusNotFound, "unknown module '%s' (served: %s)", module, strings.Join(st.moduleNames(), ", "))
		return
	}
	tool := p.byName[command]
	if tool == nil {
		if why, excluded := p.excluded[command]; excluded {
			apiError(w, http.StatusNotFound, "command '%s' of module '%s' is not served (%s)", command, module, why)
			return
		}
		apiError(w, http.StatusNotFound, "unknown command '%s' in module '%s'", command, module)
		return
	}
	if !s.permitCall(w, r, tool) {
		return
	}
	// /call's outcome for /metrics, in MCP's words: until the function
	// runs, a refusal (400, 413) is a protocol error.
	outcome := mcp.OutcomeProtocolError
	if m := s.cfg.Metrics; m != nil {
		start := time.Now()
		defer func() { m.Call(module, command, string(outcome), time.Since(start)) }()
	}
	body, ok := s.readAPIBody(w, r)
	if !ok {
		return
	}
	cmd := tool.Command
	args, err := positionalArgs(body)
	if err != nil {
		apiError(w, http.StatusBadRequest, "%s", err)
		return
	}
	if len(args) > len(cmd.Args) {
		apiError(w, http.StatusBadRequest, "command '%s' takes %d positional argument(s) (%s), got %d", command, len(cmd.Args), argSummary(cmd), len(args))
		return
	}
	named, err := namedArguments(cmd, args)
	if err != nil {
		apiError(w, http.StatusBadRequest, "%s", err)
		return
	}
	// The tool's own rules: validation, defaults and value conversion, as
	// for tools/call.
	call, err := tool.ToPositional(named)
	if err != nil {
		apiError(w, http.StatusBadRequest, "%s", err)
		return
	}
	raw, err := p.Caller.Call(r.Context(), call, mcp.CallHooks{})
	outcome = mcp.OutcomeOf(r.Context(), err)
	if err != nil {
		var ff mcp.FunctionFailure
		var ie *argmap.InputError
		switch {
		case r.Context().Err() != nil:
			apiError(w, http.StatusServiceUnavailable, "call to '%s' was cancelled", command)
		case errors.As(err, &ie):
			// A file argument nexus could not read, a path that failed its
			// check: the caller's input.
			apiError(w, http.StatusBadRequest, "%s", err)
		case errors.As(err, &ff) && ff.FunctionFailed():
			// The function raised, or a pure command's evaluation failed
			// (@throw, ...) as morloc's daemon reports it: its own message.
			apiError(w, http.StatusInternalServerError, "%s", ff.Error())
		default:
			apiError(w, http.StatusBadGateway, "%s", err)
		}
		return
	}
	value, err := argmap.ResultValue(&call.Command.Return, raw)
	if err != nil {
		outcome = mcp.OutcomeError // a wrong-typed or unreadable result
	}
	var tm *argmap.TypeMismatch
	switch {
	case errors.As(err, &tm):
		apiError(w, http.StatusInternalServerError, "'%s' returned %s", command, tm)
		return
	case err != nil:
		apiError(w, http.StatusBadGateway, "command '%s' returned a value nexus cannot read: %s", command, err)
		return
	}
	writeJSON(w, http.StatusOK, &apiReply{Status: "ok", Result: value})
}

func (s *Server) readAPIBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := readLimited(w, r, s.cfg.MaxBody)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			apiError(w, http.StatusRequestEntityTooLarge, "request body too large: the limit is %s", byteCount(s.cfg.MaxBody))
		} else {
			apiError(w, http.StatusBadRequest, "cannot read the request body: %s", err)
		}
		return nil, false
	}
	return body, true
}

// positionalArgs reads a JSON array, or {"args": array}; an empty body is
// no arguments.
func positionalArgs(body []byte) ([]json.RawMessage, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, nil
	}
	if !json.Valid(body) {
		return nil, errors.New("the body is not valid JSON: expected an array of positional arguments or {\"args\":[...]}")
	}
	if body[0] == '{' {
		var wrapped map[string]json.RawMessage
		if err := json.Unmarshal(body, &wrapped); err != nil {
			return nil, err
		}
		inner, ok := wrapped["args"]
		if !ok || len(wrapped) != 1 {
			return nil, errors.New("an object body must be exactly {\"args\":[...]}")
		}
		body = bytes.TrimSpace(inner)
	}
	if len(body) == 0 || body[0] != '[' {
		return nil, errors.New("expected an array of positional arguments or {\"args\":[...]}")
	}
	var args []json.RawMessage
	if err := json.Unmarshal(body, &args); err != nil {
		return nil, err
	}
	return args, nil
}

// argSummary lists a command's arguments for an error message.
func argSummary(c *manifest.Command) string {
	if len(c.Args) == 0 {
		return "none"
	}
	parts := make([]string, len(c.Args))
	for i := range c.Args {
		a := &c.Args[i]
		parts[i] = argmap.PropertyName(c, i) + ": " + a.TypeName
		if a.TypeName == "" && a.Kind == manifest.KindFlag {
			parts[i] = argmap.PropertyName(c, i) + ": Bool"
		}
	}
	return strings.Join(parts, ", ")
}

// namedArguments turns a positional call into the named arguments of the
// command's tool, so that the plain API and tools/call share one set of
// rules. A group unrolled into one property per field (no group option)
// is given as its record and spread into those properties. A null, or an
// argument left out, is omitted: it takes its default.
func namedArguments(c *manifest.Command, args []json.RawMessage) (json.RawMessage, error) {
	named := map[string]json.RawMessage{}
	for i, v := range args {
		if string(bytes.TrimSpace(v)) == "null" {
			continue
		}
		a := &c.Args[i]
		if a.Kind == manifest.KindGrp && a.GroupOpt == nil {
			var fields map[string]json.RawMessage
			if json.Unmarshal(v, &fields) != nil || fields == nil {
				return nil, fmt.Errorf("argument %d of '%s' (%s) must be a record object", i+1, c.Name, a.TypeName)
			}
			for k, fv := range fields {
				named[k] = fv
			}
			continue
		}
		named[argmap.PropertyName(c, i)] = v
	}
	return json.Marshal(named)
}

// Discovery (GET /discover, GET /discover/<module>).

type discoverModule struct {
	Name        string            `json:"name"`
	Version     string            `json:"version"`
	Description string            `json:"description"`
	Commands    []discoverCommand `json:"commands"`
	Excluded    []discoverExclude `json:"excluded"`
}

type discoverCommand struct {
	Name        string          `json:"name"`
	Tool        string          `json:"tool"`
	Description string          `json:"description"`
	Call        string          `json:"call"`
	Arguments   []discoverArg   `json:"arguments"`
	Returns     discoverReturns `json:"returns"`
}

type discoverArg struct {
	Position    int     `json:"position"`
	Kind        string  `json:"kind"`
	Name        string  `json:"name"`
	Type        string  `json:"type"`
	Schema      string  `json:"schema,omitempty"`
	Description string  `json:"description,omitempty"`
	Default     *string `json:"default,omitempty"`
}

type discoverReturns struct {
	Type        string `json:"type"`
	Schema      string `json:"schema"`
	Mime        string `json:"mime,omitempty"`
	Description string `json:"description,omitempty"`
}

type discoverExclude struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

func (s *Server) serveDiscover(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		apiError(w, http.StatusMethodNotAllowed, "method not allowed: %s (use GET)", r.Method)
		return
	}
	rest := strings.Trim(strings.TrimPrefix(r.URL.Path, "/discover"), "/")
	st := &s.served.Load().Value
	if rest == "" {
		mods := make([]*discoverModule, 0, len(st.programs))
		for _, p := range st.programs {
			mods = append(mods, describe(p, s.visibleTool(r)))
		}
		writeJSON(w, http.StatusOK, map[string]any{"modules": mods})
		return
	}
	p := st.byModule[rest]
	if p == nil {
		apiError(w, http.StatusNotFound, "unknown module '%s' (served: %s)", rest, strings.Join(st.moduleNames(), ", "))
		return
	}
	writeJSON(w, http.StatusOK, describe(p, s.visibleTool(r)))
}

// describe lists p's commands that visible lets the client see.
func describe(p *program, visible func(*argmap.Tool) bool) *discoverModule {
	m := p.Manifest
	d := &discoverModule{Name: p.name, Version: m.Version(), Description: strings.Join(m.Desc, "\n"),
		Commands: []discoverCommand{}, Excluded: []discoverExclude{}}
	for _, t := range p.Tools {
		if !visible(t) {
			continue
		}
		c := t.Command
		dc := discoverCommand{Name: c.Name, Tool: t.Name, Description: strings.Join(c.Desc, "\n"),
			Call: "/call/" + p.name + "/" + c.Name, Arguments: []discoverArg{},
			Returns: discoverReturns{Type: c.Return.TypeName, Schema: c.Return.Schema, Mime: c.Return.Mime, Description: strings.Join(c.Return.Desc, " ")}}
		for i := range c.Args {
			a := &c.Args[i]
			typ := a.TypeName
			if a.Kind == manifest.KindFlag && typ == "" {
				typ = "Bool"
			}
			dc.Arguments = append(dc.Arguments, discoverArg{Position: i + 1, Kind: a.Kind, Name: argmap.PropertyName(c, i),
				Type: typ, Schema: a.Schema, Description: strings.Join(a.Desc, " "), Default: a.Default})
		}
		d.Commands = append(d.Commands, dc)
	}
	for _, e := range p.Excluded {
		d.Excluded = append(d.Excluded, discoverExclude{Name: e.Command, Reason: e.Reason})
	}
	return d
}

func (st *served) moduleNames() []string {
	names := make([]string, len(st.programs))
	for i, p := range st.programs {
		names[i] = p.name
	}
	return names
}
