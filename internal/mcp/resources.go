package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"

	"github.com/nexus-mcp/nexus/internal/argmap"
)

// MCP resources (docs/spec.md §6.1; MCP server/resources): the files a
// program ships (its metadata.resources), the files its functions write
// (files.go) and the resources its commands compute (a command's
// metadata.resource, a URI template). resources/list pages through the
// first two, resources/templates/list through the templates, and
// resources/read reads any of them: a file from disk, a template's URI by
// calling its command through the path tools/call takes (invoke.go).

type listParams struct {
	Cursor *string `json:"cursor"`
}

// readListParams reads a list method's params: an optional string cursor.
func readListParams(method string, params json.RawMessage) (listParams, *Error) {
	var p listParams
	if len(params) > 0 && !isNull(params) {
		if jsonKind(params) != "object" || json.Unmarshal(params, &p) != nil {
			return p, errorf(CodeInvalidParams, "invalid %s params: expected an object with an optional string cursor", method)
		}
	}
	return p, nil
}

// pageOf finds the page a list request asks for among n items: its start
// and end. A cursor is the offset of the next page, the list's name and a
// fingerprint of the surface, so that one from another list, server or
// program is refused rather than misread.
func (s *Server) pageOf(sf *surface, method string, p listParams, n int) (start, end int, rpcErr *Error) {
	if p.Cursor != nil {
		var ok bool
		if start, ok = sf.decodeListCursor(method, *p.Cursor, n); !ok {
			return 0, 0, errorf(CodeInvalidParams, "invalid params: unknown or stale cursor %q (use the nextCursor of a previous %s)", *p.Cursor, method)
		}
	}
	return start, min(start+s.opts.PageSize, n), nil
}

func (sf *surface) listFingerprint(method string) string {
	fp := sf.fingerprint
	if sf.catalog != nil {
		fp ^= sf.catalog.fingerprint
	}
	return method + ":" + strconv.FormatUint(uint64(fp), 16)
}

func (sf *surface) encodeListCursor(method string, offset int) string {
	raw := strconv.Itoa(offset) + ":" + sf.listFingerprint(method)
	return cursorPrefix + base64.RawURLEncoding.EncodeToString([]byte(raw))
}

func (sf *surface) decodeListCursor(method, c string, n int) (int, bool) {
	body, ok := strings.CutPrefix(c, cursorPrefix)
	if !ok {
		return 0, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return 0, false
	}
	off, fp, ok := strings.Cut(string(raw), ":")
	offset, err := strconv.Atoi(off)
	if !ok || err != nil || offset <= 0 || offset >= n || fp != sf.listFingerprint(method) {
		return 0, false
	}
	return offset, true
}

// listPage answers a list method: the page params ask for of the items
// ctx's client may see in sf, as version shows them, as the member key.
func listPage[T any](ctx context.Context, s *Server, sf *surface, params json.RawMessage, method, key, version string, ttl int64,
	items func(context.Context, *surface, features) []T) (any, *Error) {
	p, rpcErr := readListParams(method, params)
	if rpcErr != nil {
		return nil, rpcErr
	}
	all := items(ctx, sf, featuresOf(version))
	start, end, rpcErr := s.pageOf(sf, method, p, len(all))
	if rpcErr != nil {
		return nil, rpcErr
	}
	return s.listResult(ctx, sf, method, object{{Key: key, Value: orEmpty(all[start:end])}}, end, len(all), version, ttl), nil
}

// orEmpty is list, or an empty one for nil: a JSON list is [], never null.
func orEmpty[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}

// listResult finishes a list result: nextCursor when there is more, and in
// 2026-07-28 the caching hints (ttl: how long the list stays as it is).
func (s *Server) listResult(ctx context.Context, sf *surface, method string, res object, end, n int, version string, ttl int64) object {
	if end < n {
		res = append(res, member{Key: "nextCursor", Value: sf.encodeListCursor(method, end)})
	}
	if featuresOf(version).stateless {
		res = append(res, member{Key: "ttlMs", Value: ttl}, member{Key: "cacheScope", Value: cacheScope(ctx)})
		res = sf.statelessResult(res)
	}
	return res
}

// resourceItem is one entry of resources/list (MCP Resource).
type resourceItem struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
	Size        *int64 `json:"size,omitempty"`
}

func fileSize(path string) *int64 {
	st, err := os.Stat(path)
	if err != nil {
		return nil
	}
	n := st.Size()
	return &n
}

// resourceItems lists every resource: the program's files, then the files
// functions wrote, in the order they first appeared.
func (s *Server) resourceItems(_ context.Context, sf *surface, f features) []resourceItem {
	var items []resourceItem
	if sf.catalog != nil {
		for _, r := range sf.catalog.resources {
			it := resourceItem{URI: r.URI, Name: r.Name, Description: r.Description, MimeType: r.MimeType, Size: fileSize(r.Path)}
			if f.title {
				it.Title = r.Title
			}
			items = append(items, it)
		}
	}
	for _, pf := range s.files.list() {
		items = append(items, resourceItem{URI: pf.uri, Name: pf.name, MimeType: pf.mimeType, Size: fileSize(pf.path),
			Description: "A file a function of the program wrote"})
	}
	return items
}

// listResources answers resources/list. A session that lists resources
// is told when a function adds one (notifications/resources/list_changed).
func (s *Server) listResources(ctx context.Context, params json.RawMessage, version string, ss *Session) (any, *Error) {
	sf := s.current()
	ttl := s.opts.CacheTTL.Milliseconds()
	if sf.catalog.hasFiles() {
		ttl = 0 // a function may add a file at any moment
	}
	res, rpcErr := listPage(ctx, s, sf, params, "resources/list", "resources", version, ttl, s.resourceItems)
	if rpcErr == nil && ss != nil {
		ss.listedResources.Store(true)
	}
	return res, rpcErr
}

// templateItem is one entry of resources/templates/list (MCP ResourceTemplate).
type templateItem struct {
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

func (s *Server) listTemplates(ctx context.Context, params json.RawMessage, version string) (any, *Error) {
	return listPage(ctx, s, s.current(), params, "resources/templates/list", "resourceTemplates", version, s.opts.CacheTTL.Milliseconds(), templateItems)
}

// templateItems lists the resource templates ctx's client may read, as f
// shows them.
func templateItems(ctx context.Context, sf *surface, f features) []templateItem {
	var items []templateItem
	if sf.catalog != nil {
		for _, t := range visible(ctx, sf.catalog.templates, func(t *template) *argmap.Tool { return t.tool }) {
			it := templateItem{URITemplate: t.URITemplate, Name: t.Name, Description: t.Description, MimeType: t.MimeType}
			if f.title {
				it.Title = t.Title
			}
			items = append(items, it)
		}
	}
	return items
}

type uriParams struct {
	URI *string `json:"uri"`
}

func readURIParam(method string, params json.RawMessage) (string, *Error) {
	var p uriParams
	if jsonKind(params) != "object" || json.Unmarshal(params, &p) != nil || p.URI == nil {
		return "", errorf(CodeInvalidParams, "invalid %s params: missing uri (a string)", method)
	}
	return *p.URI, nil
}

// notFound is the error for a URI that is no resource: -32602 with the
// URI in data (SEP-2164: "Resource not found" is Invalid Params, in every
// protocol version nexus speaks).
func notFound(uri, why string) *Error {
	return &Error{Code: CodeInvalidParams, Message: "unknown resource '" + uri + "': " + why, Data: map[string]string{"uri": uri}}
}

// readResource answers resources/read.
func (s *Server) readResource(ctx context.Context, r *Request, c client) (any, *Error) {
	uri, rpcErr := readURIParam("resources/read", r.Params)
	if rpcErr != nil {
		return nil, rpcErr
	}
	gen := s.surface.Acquire() // a template's call stays on its generation's pools
	defer gen.Release()
	sf := &gen.Value
	if view := s.readView(sf, uri, c.version); view != nil {
		return view, nil
	}
	items, input, rpcErr := s.resourceContents(ctx, r, sf, c, uri)
	if rpcErr != nil {
		return nil, rpcErr
	}
	if input != nil {
		return input, nil
	}
	res := object{{Key: "contents", Value: items}}
	if featuresOf(c.version).stateless {
		// A file may change on disk, a function answer otherwise next time.
		res = append(res, member{Key: "ttlMs", Value: 0}, member{Key: "cacheScope", Value: "public"})
		res = sf.statelessResult(res)
	}
	return res, nil
}

// resourceContents reads the resource uri: a program's file, a file a
// function wrote, or a template's URI (its command called). r, when not
// nil, is the request the read serves (its MRTR round, its progress
// token); input is set when a 2026-07-28 function asked the client.
func (s *Server) resourceContents(ctx context.Context, r *Request, sf *surface, c client, uri string) (items []contents, input object, rpcErr *Error) {
	if sf.catalog != nil {
		if res := sf.catalog.byURI[uri]; res != nil {
			data, err := readFileIn(res.Path, []string{res.root})
			if err != nil {
				return nil, nil, notFound(uri, err.Error())
			}
			return []contents{bytesContents(uri, res.MimeType, data)}, nil, nil
		}
	}
	if pf := s.files.get(uri); pf != nil {
		data, err := readFileIn(pf.path, pf.roots)
		if err != nil {
			return nil, nil, notFound(uri, err.Error())
		}
		return []contents{bytesContents(uri, pf.mimeType, data)}, nil, nil
	}
	t, vals := sf.catalog.match(uri)
	if t == nil {
		why := "it is none of this server's resources and matches none of its resource templates"
		if !sf.catalog.hasResources() {
			why = "this server has no resources"
		}
		return nil, nil, notFound(uri, why)
	}
	subject := "resource '" + uri + "'"
	args, err := t.tool.ArgumentsFromText(vals)
	if err != nil {
		return nil, nil, &Error{Code: CodeInvalidParams, Message: subject + " (template " + t.URITemplate + "): " + err.Error(), Data: map[string]string{"uri": uri}}
	}
	res, rpcErr := s.runCommand(ctx, r, sf, c, t.tool, args, subject)
	if rpcErr != nil || res.input != nil {
		return nil, res.input, rpcErr
	}
	items, err = s.computedContents(sf, t, uri, res)
	if err != nil {
		return nil, nil, errorf(CodeInternalError, "%s: %v", subject, err)
	}
	return items, nil, nil
}

// computedContents turns what a template's command gave into the
// resource's contents: its content blocks, the file it wrote (a file
// result), its bytes (a `mime` return), or its value: a string as text, any
// other value as JSON text; typed as the template says.
func (s *Server) computedContents(sf *surface, t *template, uri string, res commandResult) ([]contents, error) {
	cmd := t.tool.Command
	if len(res.blocks) > 0 {
		return blockContents(uri, t.MimeType, res.blocks)
	}
	var text string
	isString := json.Unmarshal(res.value, &text) == nil
	switch {
	case sf.catalog.fileResult(cmd) != nil:
		if !isString {
			return nil, errors.New("its command returned no path")
		}
		pf, err := s.fileFrom(sf.catalog.fileResult(cmd), text)
		if err != nil {
			return nil, err
		}
		data, err := readFileIn(pf.path, pf.roots)
		if err != nil {
			return nil, err
		}
		return []contents{bytesContents(uri, firstOf(t.MimeType, pf.mimeType), data)}, nil
	case cmd.Return.Mime != "":
		if !isString {
			return nil, errors.New("its command returned no bytes")
		}
		data, err := base64.StdEncoding.DecodeString(text)
		if err != nil {
			return nil, err
		}
		return []contents{bytesContents(uri, firstOf(t.MimeType, cmd.Return.Mime), data)}, nil
	case isString:
		return []contents{{URI: uri, MimeType: firstOf(t.MimeType, "text/plain"), Text: &text}}, nil
	}
	js := string(res.value)
	return []contents{{URI: uri, MimeType: firstOf(t.MimeType, "application/json"), Text: &js}}, nil
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// blockContents turns MCP content blocks (a function's nexus.Content) into
// resource contents: text as text, images and audio as blobs, embedded
// resources as they are.
func blockContents(uri, mime string, blocks json.RawMessage) ([]contents, error) {
	type head struct {
		Type, Text, Data, MimeType string
		Resource                   *contents
	}
	return mapBlocks(blocks, func(_ json.RawMessage, h head) (contents, error) {
		switch h.Type {
		case "text":
			return contents{URI: uri, MimeType: firstOf(mime, "text/plain"), Text: &h.Text}, nil
		case "image", "audio":
			return contents{URI: uri, MimeType: h.MimeType, Blob: &h.Data}, nil
		case "resource":
			if h.Resource == nil || h.Resource.URI == "" {
				return contents{}, errors.New("an embedded resource block without a resource")
			}
			return *h.Resource, nil
		}
		return contents{}, errors.New("a " + strconv.Quote(h.Type) + " block is no resource contents")
	})
}

// isFeatureMethod reports whether feature serves method (or, for
// subscriptions, a session does).
func isFeatureMethod(method string) bool {
	switch method {
	case "resources/list", "resources/templates/list", "resources/read",
		"resources/subscribe", "resources/unsubscribe",
		"prompts/list", "prompts/get", "completion/complete":
		return true
	}
	return false
}

// feature serves the resource, prompt and completion methods in either
// era; ss is the handshake-era session, nil for a stateless request.
func (s *Server) feature(ctx context.Context, r *Request, c client, ss *Session) (any, *Error) {
	switch r.Method {
	case "resources/list":
		return s.listResources(ctx, r.Params, c.version, ss)
	case "resources/templates/list":
		return s.listTemplates(ctx, r.Params, c.version)
	case "resources/read":
		return s.readResource(ctx, r, c)
	case "prompts/list":
		return s.listPrompts(ctx, r.Params, c.version)
	case "prompts/get":
		return s.getPrompt(ctx, r, c)
	case "completion/complete":
		return s.complete(ctx, r, c)
	}
	return nil, errorf(CodeMethodNotFound, "method not found: %s", r.Method)
}

// ResourcesPayload is what `--mcp-resources` prints: every resource (the
// program's files) and every resource template, as the latest version
// shows them.
func (s *Server) ResourcesPayload() any {
	ctx, sf, f := context.Background(), s.current(), featuresOf(LatestVersion)
	return object{{Key: "resources", Value: orEmpty(s.resourceItems(ctx, sf, f))}, {Key: "resourceTemplates", Value: orEmpty(templateItems(ctx, sf, f))}}
}
