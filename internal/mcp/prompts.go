package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/manifest"
)

// MCP prompts (docs/spec.md §6.1; MCP server/prompts): a program declares
// prompts in its manifest (metadata.prompts: messages with {argument}
// placeholders, embedded resources and images), or a command computes one
// (its metadata.prompt): the prompt's arguments are the command's, and its
// function returns the text of one user message, a list of {role, content}
// messages, or content blocks (each a user message).

// promptItem is one entry of prompts/list (MCP Prompt).
type promptItem struct {
	Name        string      `json:"name"`
	Title       string      `json:"title,omitempty"`
	Description string      `json:"description,omitempty"`
	Arguments   []promptArg `json:"arguments"`
}

func (s *Server) listPrompts(ctx context.Context, params json.RawMessage, version string) (any, *Error) {
	return listPage(ctx, s, s.current(), params, "prompts/list", "prompts", version, s.opts.CacheTTL.Milliseconds(), promptItems)
}

// promptItems lists the prompts ctx's client may get, as f shows them.
func promptItems(ctx context.Context, sf *surface, f features) []promptItem {
	var items []promptItem
	if sf.catalog != nil {
		for _, pr := range visible(ctx, sf.catalog.prompts, func(pr *prompt) *argmap.Tool { return pr.tool }) {
			it := promptItem{Name: pr.name, Description: pr.def.Description, Arguments: pr.args}
			if f.title {
				it.Title = pr.def.Title
			} else {
				it.Arguments = untitled(pr.args)
			}
			if it.Arguments == nil {
				it.Arguments = []promptArg{}
			}
			items = append(items, it)
		}
	}
	return items
}

// untitled drops the arguments' titles for a version that has none.
func untitled(args []promptArg) []promptArg {
	out := slices.Clone(args)
	for i := range out {
		out[i].Title = ""
	}
	return out
}

type getPromptParams struct {
	Name      *string                    `json:"name"`
	Arguments map[string]json.RawMessage `json:"arguments"`
}

// promptMessage is one message of a prompts/get result.
type promptMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// getPrompt answers prompts/get.
func (s *Server) getPrompt(ctx context.Context, r *Request, c client) (any, *Error) {
	var p getPromptParams
	if jsonKind(r.Params) != "object" || json.Unmarshal(r.Params, &p) != nil || p.Name == nil {
		return nil, errorf(CodeInvalidParams, "invalid prompts/get params: expected an object with name (a string) and optional arguments (an object of strings)")
	}
	gen := s.surface.Acquire()
	defer gen.Release()
	sf := &gen.Value
	var pr *prompt
	if sf.catalog != nil {
		pr = sf.catalog.byPrompt[*p.Name]
	}
	if pr == nil {
		if !sf.catalog.hasPrompts() {
			return nil, errorf(CodeInvalidParams, "unknown prompt '%s': this server has no prompts", *p.Name)
		}
		return nil, errorf(CodeInvalidParams, "unknown prompt '%s' (prompts/list lists them)", *p.Name)
	}
	args, rpcErr := pr.checkArguments(p.Arguments)
	if rpcErr != nil {
		return nil, rpcErr
	}
	f := featuresOf(c.version)
	var msgs []promptMessage
	if pr.tool != nil {
		var input object
		if msgs, input, rpcErr = s.computedPrompt(ctx, r, sf, c, pr, args); rpcErr != nil {
			return nil, rpcErr
		}
		if input != nil {
			return input, nil
		}
	} else if msgs, rpcErr = s.declaredPrompt(ctx, sf, c, pr, args); rpcErr != nil {
		return nil, rpcErr
	}
	uri := "nexus://" + url.PathEscape(sf.info.Name) + "/prompts/" + url.PathEscape(pr.name)
	for i := range msgs {
		msgs[i].Content = forVersion(msgs[i].Content, f, uri)
	}
	res := object{}
	if pr.def.Description != "" {
		res = append(res, member{Key: "description", Value: pr.def.Description})
	}
	res = append(res, member{Key: "messages", Value: msgs})
	if f.stateless {
		res = sf.statelessResult(res)
	}
	return res, nil
}

// checkArguments checks prompts/get's arguments against the prompt's: each
// a string, each known, every required one given (MCP: -32602 for
// "missing required arguments").
func (pr *prompt) checkArguments(given map[string]json.RawMessage) (map[string]string, *Error) {
	names := make([]string, len(pr.args))
	for i, a := range pr.args {
		names[i] = a.Name
	}
	args := map[string]string{}
	keys := make([]string, 0, len(given))
	for k := range given {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(names, k) {
			return nil, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("unexpected argument '%s' of prompt '%s' (its arguments: %s)", k, pr.name, listOrNone(names)),
				Data: map[string]string{"argument": k}}
		}
		var v string
		if raw := given[k]; isNull(raw) {
			continue // absent
		} else if json.Unmarshal(raw, &v) != nil {
			return nil, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("argument '%s' of prompt '%s' must be a string (prompt arguments are strings), got %s", k, pr.name, jsonKind(raw)),
				Data: map[string]string{"argument": k}}
		}
		args[k] = v
	}
	for _, a := range pr.args {
		if _, ok := args[a.Name]; a.Required && !ok {
			return nil, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("missing required argument '%s' of prompt '%s'", a.Name, pr.name),
				Data: map[string]string{"argument": a.Name}}
		}
	}
	return args, nil
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// declaredPrompt builds a declared prompt's messages: placeholders filled
// (an optional argument not given is empty), files read, embedded
// resources read from this server when the manifest gives no contents.
func (s *Server) declaredPrompt(ctx context.Context, sf *surface, c client, pr *prompt, args map[string]string) ([]promptMessage, *Error) {
	fill := func(text string) string {
		out, _ := manifest.ExpandPlaceholders(text, func(name string) (string, bool) { return args[name], true })
		return out // checked at load: every placeholder names an argument
	}
	subject := "prompt '" + pr.name + "'"
	msgs := make([]promptMessage, 0, len(pr.def.Messages))
	for _, m := range pr.def.Messages {
		var content any
		switch m.Type {
		case "text":
			content = &textBlock{Type: "text", Text: fill(m.Text)}
		case "image", "audio":
			data, err := os.ReadFile(m.Path)
			if err != nil {
				return nil, errorf(CodeInternalError, "%s: its %s %s: %v", subject, m.Type, m.Path, err)
			}
			content = &mediaBlock{Type: m.Type, Data: base64.StdEncoding.EncodeToString(data), MimeType: m.MimeType}
		case "resource":
			uri := fill(m.URI)
			var item contents
			switch {
			case m.Path != "":
				data, err := os.ReadFile(m.Path)
				if err != nil {
					return nil, errorf(CodeInternalError, "%s: embedded resource %s: %v", subject, m.Path, err)
				}
				item = bytesContents(uri, firstOf(m.MimeType, "text/plain"), data)
			case m.Text != "":
				t := fill(m.Text)
				item = contents{URI: uri, MimeType: firstOf(m.MimeType, "text/plain"), Text: &t}
			default:
				// The contents of one of this server's resources. A function
				// behind a template may not ask the client from here: the
				// request is the prompt's, not the resource's.
				items, _, rpcErr := s.resourceContents(ctx, nil, sf, client{version: c.version, logLevel: c.logLevel, capabilities: c.capabilities}, uri)
				if rpcErr != nil {
					return nil, &Error{Code: rpcErr.Code, Message: subject + ": embedded " + rpcErr.Message, Data: rpcErr.Data}
				}
				if len(items) == 0 {
					return nil, errorf(CodeInternalError, "%s: embedded resource '%s' has no contents", subject, uri)
				}
				item = items[0]
				if m.MimeType != "" {
					item.MimeType = m.MimeType
				}
			}
			content = &embeddedBlock{Type: "resource", Resource: item}
		}
		msgs = append(msgs, promptMessage{Role: m.Role, Content: content})
	}
	return msgs, nil
}

type embeddedBlock struct {
	Type     string   `json:"type"`
	Resource contents `json:"resource"`
}

// computedPrompt runs the command behind a prompt and reads its messages.
func (s *Server) computedPrompt(ctx context.Context, r *Request, sf *surface, c client, pr *prompt, args map[string]string) ([]promptMessage, object, *Error) {
	subject := "prompt '" + pr.name + "'"
	callArgs, err := pr.tool.ArgumentsFromText(args)
	if err != nil {
		return nil, nil, errorf(CodeInvalidParams, "%s: %s", subject, err.Error())
	}
	res, rpcErr := s.runCommand(ctx, r, sf, c, pr.tool, callArgs, subject)
	if rpcErr != nil || res.input != nil {
		return nil, res.input, rpcErr
	}
	msgs, err := promptMessages(res)
	if err != nil {
		return nil, nil, errorf(CodeInternalError, "%s: '%s' returned %v", subject, pr.tool.Name, err)
	}
	return msgs, nil, nil
}

// promptMessages reads a prompt command's result: content blocks (each a
// user message), a string (one user message), or a list of {role,
// content} whose content is a string (text) or a content block.
func promptMessages(res commandResult) ([]promptMessage, error) {
	if len(res.blocks) > 0 {
		var blocks []json.RawMessage
		if err := json.Unmarshal(res.blocks, &blocks); err != nil {
			return nil, err
		}
		msgs := make([]promptMessage, len(blocks))
		for i, b := range blocks {
			msgs[i] = promptMessage{Role: "user", Content: b}
		}
		return msgs, nil
	}
	var text string
	if json.Unmarshal(res.value, &text) == nil {
		return []promptMessage{{Role: "user", Content: &textBlock{Type: "text", Text: text}}}, nil
	}
	var list []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(res.value, &list); err != nil {
		return nil, fmt.Errorf("%s where a prompt is a string (one user message) or a list of {role, content} messages", jsonKind(res.value))
	}
	msgs := make([]promptMessage, 0, len(list))
	for i, m := range list {
		if m.Role != "user" && m.Role != "assistant" {
			return nil, fmt.Errorf("message %d with role %q (expected \"user\" or \"assistant\")", i, m.Role)
		}
		switch jsonKind(m.Content) {
		case "string":
			var t string
			_ = json.Unmarshal(m.Content, &t)
			msgs = append(msgs, promptMessage{Role: m.Role, Content: &textBlock{Type: "text", Text: t}})
		case "object":
			var head struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(m.Content, &head) != nil || head.Type == "" {
				return nil, fmt.Errorf("message %d whose content has no type (expected text or a content block)", i)
			}
			msgs = append(msgs, promptMessage{Role: m.Role, Content: m.Content})
		default:
			return nil, fmt.Errorf("message %d whose content is %s (expected text or a content block)", i, jsonKind(m.Content))
		}
	}
	return msgs, nil
}

// forVersion shows a message's content as a version knows it, as
// contentFor does a tool's: audio before 2025-03-26 becomes an embedded
// resource, a resource_link before 2025-06-18 a text naming its URI.
func forVersion(content any, f features, uri string) any {
	raw, err := marshalCompact(content)
	if err != nil {
		return content
	}
	out, err := contentFor(json.RawMessage("["+string(raw)+"]"), f, uri)
	if err != nil || len(out) != 1 {
		return content
	}
	return out[0]
}

// PromptsPayload is what `--mcp-prompts` prints: every prompt, as the
// latest version shows it.
func (s *Server) PromptsPayload() any {
	items := promptItems(context.Background(), s.current(), featuresOf(LatestVersion))
	return object{{Key: "prompts", Value: orEmpty(items)}}
}
