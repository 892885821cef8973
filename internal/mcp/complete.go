package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
)

// completion/complete (docs/spec.md §6.1; MCP server/utilities/completion):
// the values a prompt's argument or a template's variable may take, given
// what the user typed so far. They come from the manifest: a fixed list (a
// declared argument's "values", a command's metadata.completions, an
// enumerated property such as a Bool or _render), filtered by prefix; or a
// completer command, which gets the partial value and returns the list.

// MaxCompletions is the most values one completion result holds (MCP:
// "Must not exceed 100 items"); total and hasMore tell of the rest.
const MaxCompletions = 100

type completeParams struct {
	Ref *struct {
		Type string `json:"type"`
		Name string `json:"name"`
		URI  string `json:"uri"`
	} `json:"ref"`
	Argument *struct {
		Name  *string `json:"name"`
		Value *string `json:"value"`
	} `json:"argument"`
}

// complete answers completion/complete.
func (s *Server) complete(ctx context.Context, r *Request, c client) (any, *Error) {
	var p completeParams
	if jsonKind(r.Params) != "object" || json.Unmarshal(r.Params, &p) != nil || p.Ref == nil || p.Argument == nil || p.Argument.Name == nil || p.Argument.Value == nil {
		return nil, errorf(CodeInvalidParams, "invalid completion/complete params: expected ref ({\"type\": \"ref/prompt\", \"name\"} or {\"type\": \"ref/resource\", \"uri\"}) and argument ({\"name\", \"value\"}, strings)")
	}
	gen := s.surface.Acquire()
	defer gen.Release()
	sf := &gen.Value
	name, partial := *p.Argument.Name, *p.Argument.Value
	var src completionSource
	switch p.Ref.Type {
	case "ref/prompt":
		var pr *prompt
		if sf.catalog != nil {
			pr = sf.catalog.byPrompt[p.Ref.Name]
		}
		if pr == nil {
			return nil, errorf(CodeInvalidParams, "unknown prompt '%s' to complete an argument of", p.Ref.Name)
		}
		i := slices.IndexFunc(pr.args, func(a promptArg) bool { return a.Name == name })
		if i < 0 {
			names := make([]string, len(pr.args))
			for k, a := range pr.args {
				names[k] = a.Name
			}
			return nil, errorf(CodeInvalidParams, "prompt '%s' has no argument '%s' (its arguments: %s)", pr.name, name, listOrNone(names))
		}
		src = pr.args[i].completion
	case "ref/resource":
		t := sf.catalog.templateByURI(p.Ref.URI)
		if t == nil {
			return nil, errorf(CodeInvalidParams, "unknown resource template '%s' to complete a variable of (resources/templates/list lists them)", p.Ref.URI)
		}
		var ok bool
		if src, ok = t.completions[name]; !ok {
			return nil, errorf(CodeInvalidParams, "resource template '%s' has no variable '%s' (its variables: %s)", t.URITemplate, name, listOrNone(t.Vars))
		}
	default:
		return nil, errorf(CodeInvalidParams, "invalid completion/complete params: ref.type must be \"ref/prompt\" or \"ref/resource\", got %q", p.Ref.Type)
	}
	var values []string
	switch {
	case src.completer != nil:
		args, err := src.completer.ArgumentsFromText(map[string]string{completerProperty(src): partial})
		if err != nil {
			return nil, errorf(CodeInvalidParams, "completing '%s': %s", name, err.Error())
		}
		// A completer answers at once: it asks the client nothing.
		res, rpcErr := s.runCommand(ctx, nil, sf, client{version: c.version, logLevel: c.logLevel, capabilities: c.capabilities}, src.completer, args, "completing '"+name+"'")
		if rpcErr != nil {
			return nil, rpcErr
		}
		if err := json.Unmarshal(res.value, &values); err != nil {
			return nil, errorf(CodeInternalError, "completing '%s': completer '%s' returned %s, not a list of strings", name, src.completer.Name, jsonKind(res.value))
		}
	default:
		low := strings.ToLower(partial)
		for _, v := range src.values {
			if strings.HasPrefix(strings.ToLower(v), low) {
				values = append(values, v)
			}
		}
	}
	total := len(values)
	if values == nil {
		values = []string{}
	}
	res := object{{Key: "completion", Value: object{
		{Key: "values", Value: values[:min(total, MaxCompletions)]},
		{Key: "total", Value: total},
		{Key: "hasMore", Value: total > MaxCompletions},
	}}}
	if featuresOf(c.version).stateless {
		res = sf.statelessResult(res)
	}
	return res, nil
}

// completerProperty is the one property a completer takes.
func completerProperty(src completionSource) string {
	for _, p := range src.completer.Properties() {
		if p.Name != "_render" {
			return p.Name
		}
	}
	return ""
}
