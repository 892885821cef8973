package mcp

import (
	"encoding/json"
)

// nexus serves a program's functions as tools and has no prompts, no
// resources and nothing to complete. Clients ask for them anyway, so the
// list methods answer empty lists and completion/complete no values, rather
// than -32601 (issue 5; the MCP conformance suite checks each).

// emptyLists names the result key of each list method nexus answers empty.
var emptyLists = map[string]string{
	"prompts/list":             "prompts",
	"resources/list":           "resources",
	"resources/templates/list": "resourceTemplates",
}

type emptyListParams struct {
	Cursor *string `json:"cursor"`
}

type readParams struct {
	URI  *string `json:"uri"`
	Name *string `json:"name"`
}

// isEmptyFeature reports whether emptyFeature serves method.
func isEmptyFeature(method string) bool {
	if _, ok := emptyLists[method]; ok {
		return true
	}
	switch method {
	case "completion/complete", "resources/read", "prompts/get":
		return true
	}
	return false
}

// emptyFeature serves the prompt, resource and completion methods; ok is
// false for any other method.
func (s *Server) emptyFeature(method string, params json.RawMessage, version string) (result any, rpcErr *Error, ok bool) {
	stateless := featuresOf(version).stateless
	if key, isList := emptyLists[method]; isList {
		var p emptyListParams
		if len(params) > 0 && json.Unmarshal(params, &p) != nil {
			return nil, errorf(CodeInvalidParams, "invalid %s params: expected an object with an optional string cursor", method), true
		}
		if p.Cursor != nil {
			// An empty list has no pages: no cursor can be one of ours.
			return nil, errorf(CodeInvalidParams, "invalid params: unknown cursor %q (%s has a single, empty page)", *p.Cursor, method), true
		}
		res := object{{Key: key, Value: []any{}}}
		if stateless {
			res = append(res, member{Key: "ttlMs", Value: s.opts.CacheTTL.Milliseconds()}, member{Key: "cacheScope", Value: "public"})
			res = s.statelessResult(res)
		}
		return res, nil, true
	}
	switch method {
	case "completion/complete":
		res := object{{Key: "completion", Value: object{{Key: "values", Value: []string{}}, {Key: "total", Value: 0}, {Key: "hasMore", Value: false}}}}
		if stateless {
			res = s.statelessResult(res)
		}
		return res, nil, true
	case "resources/read":
		var p readParams
		if json.Unmarshal(params, &p) != nil || p.URI == nil {
			return nil, errorf(CodeInvalidParams, "invalid %s params: missing uri (a string)", method), true
		}
		// MCP 2026-07-28 (and SEP-2164): an unknown resource is -32602 with the uri in data.
		return nil, &Error{Code: CodeInvalidParams, Message: "unknown resource '" + *p.URI + "': this server has no resources", Data: map[string]string{"uri": *p.URI}}, true
	case "prompts/get":
		var p readParams
		if json.Unmarshal(params, &p) != nil || p.Name == nil {
			return nil, errorf(CodeInvalidParams, "invalid prompts/get params: missing name (a string)"), true
		}
		return nil, errorf(CodeInvalidParams, "unknown prompt '%s': this server has no prompts", *p.Name), true
	}
	return nil, nil, false
}
