package mcp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/nexus-mcp/nexus/internal/argmap"
)

type listToolsResult struct {
	Tools []*argmap.Tool `json:"tools"`
}

func (s *Server) listTools(params json.RawMessage, version string) (any, *Error) {
	tools := s.tools
	if tools == nil {
		tools = []*argmap.Tool{}
	}
	return &listToolsResult{Tools: tools}, nil
}

// ToolsPayload is the tools/list result, as `--mcp-tools` prints it.
func (s *Server) ToolsPayload() any { return &listToolsResult{Tools: s.tools} }

type callToolParams struct {
	Name      *string         `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      struct {
		ProgressToken json.RawMessage `json:"progressToken"`
	} `json:"_meta"`
}

// Content is one MCP content block.
type Content struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}

// CallToolResult is the result of tools/call (SPEC §4.7), keys in the order
// the seed's transcripts show.
type CallToolResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError"`
}

func errorResult(msg string) *CallToolResult {
	return &CallToolResult{Content: []Content{{Type: "text", Text: msg}}, IsError: true}
}

func (s *Server) callTool(ctx context.Context, params json.RawMessage, version string) (any, *Error) {
	var p callToolParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, errorf(CodeInvalidParams, "invalid tools/call params: %v", err)
	}
	if p.Name == nil {
		return nil, errorf(CodeInvalidParams, "invalid tools/call params: missing tool name (params.name must be a string)")
	}
	tool := s.byName[*p.Name]
	if tool == nil {
		return nil, errorf(CodeInvalidParams, "unknown tool '%s'", *p.Name)
	}
	call, err := tool.ToPositional(p.Arguments)
	if err != nil {
		return nil, errorf(CodeInvalidParams, "%s", err.Error())
	}
	hooks := CallHooks{}
	if token := p.Meta.ProgressToken; len(token) > 0 && string(token) != "null" {
		hooks.Progress = progressNotifier(notifierFrom(ctx), token)
	}
	cmd := call.Command
	raw, err := s.caller.Call(ctx, cmd, call.Args, hooks)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return errorResult("call to '" + tool.Name + "' was cancelled"), nil
		}
		// SPEC §4.4: a function that raises or a pool that fails is a result, not a protocol error.
		return errorResult(err.Error()), nil
	}
	value, err := argmap.ResultValue(&cmd.Return, raw)
	if err != nil {
		return errorResult("tool '" + tool.Name + "' returned a value nexus cannot read: " + err.Error()), nil
	}
	res := &CallToolResult{Content: []Content{{Type: "text", Text: string(value)}}}
	// SPEC §4.7: a record return also fills structuredContent, matching outputSchema.
	if tool.OutputSchema != nil && cmd == tool.Command {
		res.StructuredContent = value
	}
	return res, nil
}

type progressParams struct {
	ProgressToken json.RawMessage `json:"progressToken"`
	Progress      float64         `json:"progress"`
	Total         *float64        `json:"total,omitempty"`
	Message       string          `json:"message,omitempty"`
}

func progressNotifier(notify func(*Notification), token json.RawMessage) func(float64, *float64, string) {
	return func(progress float64, total *float64, message string) {
		notify(&Notification{Method: "notifications/progress", Params: &progressParams{
			ProgressToken: token, Progress: progress, Total: total, Message: message,
		}})
	}
}
