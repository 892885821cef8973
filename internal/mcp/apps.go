package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/views"
)

// MCP Apps (the io.modelcontextprotocol/ui extension, specification
// 2026-01-26; docs/views.md): each tool whose result has a view (package
// views, chosen from its declared type) names it in _meta.ui.resourceUri,
// a ui:// resource whose HTML the host reads with resources/read and runs
// in a sandboxed frame, handing it the call's input and result. Only a
// client that declares the extension with the MCP App MIME type sees any
// of it: every other client gets the tool list, capabilities and results
// it got before, byte for byte.

// AppsExtension is the MCP Apps extension's identifier.
const AppsExtension = "io.modelcontextprotocol/ui"

// appView is one tool's view, as served.
type appView struct {
	view  views.View
	uri   string
	title string
}

// viewsOf finds the view of each tool. A metadata.view that cannot be used
// was refused when the catalog was built (NewCatalog); here it means none.
func viewsOf(info Implementation, tools []*argmap.Tool) map[string]*appView {
	out := map[string]*appView{}
	for _, t := range tools {
		v, ok, err := views.For(t.Command)
		if err != nil || !ok {
			continue
		}
		title := t.Name
		if t.Annotations != nil && t.Annotations.Title != "" {
			title = t.Annotations.Title
		}
		out[t.Name] = &appView{view: v, title: title,
			uri: "ui://" + url.PathEscape(info.Name) + "/" + url.PathEscape(t.Name)}
	}
	return out
}

// appsClient reports whether a client's capabilities declare MCP Apps with
// the type nexus's views have: capabilities.extensions[AppsExtension]
// with mimeTypes holding views.MimeType.
func appsClient(capabilities json.RawMessage) bool {
	if !bytes.Contains(capabilities, []byte(AppsExtension)) {
		return false // most clients: nothing to decode
	}
	var caps struct {
		Extensions map[string]struct {
			MimeTypes []string `json:"mimeTypes"`
		} `json:"extensions"`
	}
	if json.Unmarshal(capabilities, &caps) != nil {
		return false
	}
	ext, ok := caps.Extensions[AppsExtension]
	return ok && slices.Contains(ext.MimeTypes, views.MimeType)
}

// showsViews reports whether a client with these capabilities is shown
// views: it declares MCP Apps and views are not turned off.
func (s *Server) showsViews(capabilities json.RawMessage) bool {
	return !s.opts.NoViews && appsClient(capabilities)
}

// withViews adds to a reply what a client shown views sees: on tools/list,
// each tool with a view names it in _meta.ui.resourceUri, after the
// members its protocol version shows; the last page of resources/list
// ends with the views. Any other reply is returned as it is. session gives
// a handshake session's capabilities; a stateless request carries its own.
func (s *Server) withViews(r *Request, result any, session func() json.RawMessage) any {
	if r.Method != "tools/list" && r.Method != "resources/list" {
		return result
	}
	res, ok := result.(object)
	if !ok {
		return result // an error, or input_required
	}
	var caps json.RawMessage
	if IsStateless(r) {
		caps = requestMeta(r)[MetaClientCapabilities]
	} else if session != nil {
		caps = session()
	}
	if !s.showsViews(caps) {
		return result
	}
	sf := s.current()
	_, more := res.Get("nextCursor")
	for i, m := range res {
		switch items := m.Value.(type) {
		case []argmap.Object:
			for j, tool := range items {
				name, _ := tool.Get("name")
				if tv := sf.views[fmt.Sprint(name)]; tv != nil && m.Key == "tools" {
					items[j] = append(tool, argmap.Member{Key: "_meta", Value: object{{Key: "ui", Value: object{{Key: "resourceUri", Value: tv.uri}}}}})
				}
			}
		case []resourceItem:
			if m.Key == "resources" && !more {
				res[i].Value = append(items, sf.viewItems()...)
			}
		}
	}
	return res
}

// capabilitiesOf is what the session's client declared in initialize.
func (ss *Session) capabilitiesOf() json.RawMessage {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.capabilities
}

// withAppsCapabilities adds what a server declares to a client shown
// views: the extension (SEP-1724 extensions are declared by both sides),
// and resources, which its host reads the views with.
func (s *Server) withAppsCapabilities(caps map[string]any, client json.RawMessage) map[string]any {
	if !s.showsViews(client) || len(s.current().views) == 0 {
		return caps
	}
	ext, _ := caps["extensions"].(map[string]any)
	if ext == nil {
		ext = map[string]any{}
	}
	ext[AppsExtension] = map[string]any{}
	caps["extensions"] = ext
	if _, ok := caps["resources"]; !ok {
		caps["resources"] = map[string]any{}
	}
	return caps
}

// viewItems are the views as resources/list entries, for a client shown
// views, in tool order (MCP Apps: hosts may review them up front).
func (sf *surface) viewItems() []resourceItem {
	var items []resourceItem
	for _, t := range sf.tools {
		if tv := sf.views[t.Name]; tv != nil {
			items = append(items, resourceItem{URI: tv.uri, Name: t.Name + " view", MimeType: views.MimeType,
				Description: "How " + t.Name + "'s result is drawn: a " + string(tv.view.Kind) + " view of " + tv.view.Type})
		}
	}
	return items
}

// viewContents is a view as resources/read contents.
type viewContents struct {
	URI      string          `json:"uri"`
	MimeType string          `json:"mimeType"`
	Text     string          `json:"text"`
	Meta     json.RawMessage `json:"_meta"`
}

// viewMeta asks for the host's border: a view draws no frame of its own.
// No csp: a view needs no domain, and the host's default allows none.
var viewMeta = json.RawMessage(`{"ui":{"prefersBorder":true}}`)

// readView answers resources/read of a view's ui:// URI; nil when uri
// names no view. Any client may read one: it is static and holds nothing
// of the program but the tool's name, title and type.
func (s *Server) readView(sf *surface, uri, version string) any {
	if s.opts.NoViews {
		return nil
	}
	var tv *appView
	for _, v := range sf.views {
		if v.uri == uri {
			tv = v
			break
		}
	}
	if tv == nil {
		return nil
	}
	res := object{{Key: "contents", Value: []viewContents{{URI: uri, MimeType: views.MimeType, Text: string(tv.view.HTML(tv.title)), Meta: viewMeta}}}}
	if featuresOf(version).stateless {
		res = append(res, member{Key: "ttlMs", Value: s.opts.CacheTTL.Milliseconds()}, member{Key: "cacheScope", Value: "public"})
		res = sf.statelessResult(res)
	}
	return res
}

// viewData is a result's structuredContent for a client shown views:
// the data its view draws. A record is itself (as outputSchema says);
// any other value, {"result": value}, since structuredContent is an
// object. nil when the tool has no view.
func (sf *surface) viewData(tool string, value json.RawMessage) json.RawMessage {
	tv := sf.views[tool]
	if tv == nil || value == nil || isNull(value) {
		return nil
	}
	if !tv.view.Wrapped {
		return value
	}
	b := make([]byte, 0, len(value)+len(`{"result":}`))
	b = append(b, `{"result":`...)
	b = append(b, value...)
	return append(b, '}')
}
