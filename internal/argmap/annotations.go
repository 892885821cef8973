package argmap

import (
	"encoding/json"
	"strings"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// Annotations are the MCP tool annotations (title and behaviour hints) a
// command declares in its manifest metadata. They are hints for clients,
// which must not trust them; nexus neither checks nor relies on them.
type Annotations struct {
	Title           string
	ReadOnlyHint    *bool
	DestructiveHint *bool
	IdempotentHint  *bool
	OpenWorldHint   *bool
}

// hintKeys are the boolean hints, in the order MCP's schema lists them.
var hintKeys = []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}

func (a *Annotations) hint(key string) **bool {
	switch key {
	case "readOnlyHint":
		return &a.ReadOnlyHint
	case "destructiveHint":
		return &a.DestructiveHint
	case "idempotentHint":
		return &a.IdempotentHint
	case "openWorldHint":
		return &a.OpenWorldHint
	}
	return nil
}

// annotationsOf reads a command's title and hints from its metadata: the
// keys "title", "readOnlyHint", "destructiveHint", "idempotentHint" and
// "openWorldHint", at the top level or inside an "annotations" object (the
// top level wins). A title must be a non-blank string and a hint a boolean;
// other values are ignored. It returns nil when the command declares none.
func annotationsOf(c *manifest.Command) *Annotations {
	a := &Annotations{}
	found := false
	read := func(md map[string]json.RawMessage) {
		var title string
		if raw, ok := md["title"]; ok && json.Unmarshal(raw, &title) == nil && strings.TrimSpace(title) != "" {
			a.Title = title
			found = true
		}
		for _, k := range hintKeys {
			var b bool
			if raw, ok := md[k]; ok && json.Unmarshal(raw, &b) == nil && string(raw) != "null" {
				*a.hint(k) = &b
				found = true
			}
		}
	}
	var nested map[string]json.RawMessage
	if raw, ok := c.Metadata["annotations"]; ok && json.Unmarshal(raw, &nested) == nil {
		read(nested)
	}
	read(c.Metadata)
	if !found {
		return nil
	}
	return a
}

// object is the MCP ToolAnnotations object: title (when withTitle), then
// the hints that are set. Nil when it would be empty.
func (a *Annotations) object(withTitle bool) Object {
	if a == nil {
		return nil
	}
	var o Object
	if withTitle && a.Title != "" {
		o = append(o, Member{"title", a.Title})
	}
	for _, k := range hintKeys {
		if v := *a.hint(k); v != nil {
			o = append(o, Member{k, *v})
		}
	}
	return o
}

// ToolView selects the optional members of a tool object, which older MCP
// versions lack: annotations came with 2025-03-26, title and outputSchema
// with 2025-06-18, execution (task support) with 2025-11-25.
type ToolView struct {
	Title        bool
	OutputSchema bool
	Annotations  bool
	Execution    bool
}

// FullView shows every member (the newest protocol versions).
var FullView = ToolView{Title: true, OutputSchema: true, Annotations: true, Execution: true}

// Object is the tool as an MCP client of the given view sees it, keys in
// the order {name, title?, description, inputSchema, outputSchema?,
// annotations?, execution?}. Without a top-level title, the title is kept inside
// annotations (where 2025-03-26 carried it).
func (t *Tool) Object(v ToolView) Object {
	o := Object{{"name", t.Name}}
	if v.Title && t.Annotations != nil && t.Annotations.Title != "" {
		o = append(o, Member{"title", t.Annotations.Title})
	}
	o = append(o, Member{"description", t.Description}, Member{"inputSchema", t.InputSchema})
	if v.OutputSchema && t.OutputSchema != nil {
		o = append(o, Member{"outputSchema", t.OutputSchema})
	}
	if v.Annotations {
		if ann := t.Annotations.object(true); len(ann) > 0 {
			o = append(o, Member{"annotations", ann})
		}
	}
	if v.Execution {
		if ex := t.execution(); ex != nil {
			o = append(o, Member{"execution", ex})
		}
	}
	return o
}
