package argmap

import "testing"

func TestToolAnnotations(t *testing.T) {
	args := pos("j", "")
	tests := []struct {
		name     string
		metadata string // the command's "metadata" member, "" for none
		view     ToolView
		want     string // the tool object without inputSchema's body
	}{
		{"no metadata", ``, FullView,
			`{"name":"f","description":"Does f","inputSchema":{}}`},
		{"unrelated metadata", `{"stdoutX":true}`, FullView,
			`{"name":"f","description":"Does f","inputSchema":{}}`},
		{"title and hints", `{"title":"Eff","readOnlyHint":true,"openWorldHint":false}`, FullView,
			`{"name":"f","title":"Eff","description":"Does f","inputSchema":{},"annotations":{"title":"Eff","readOnlyHint":true,"openWorldHint":false}}`},
		{"hints in MCP order whatever the metadata order", `{"idempotentHint":true,"destructiveHint":false}`, FullView,
			`{"name":"f","description":"Does f","inputSchema":{},"annotations":{"destructiveHint":false,"idempotentHint":true}}`},
		{"nested annotations object", `{"annotations":{"title":"Nested","destructiveHint":true}}`, FullView,
			`{"name":"f","title":"Nested","description":"Does f","inputSchema":{},"annotations":{"title":"Nested","destructiveHint":true}}`},
		{"top level wins over nested", `{"annotations":{"readOnlyHint":false},"readOnlyHint":true}`, FullView,
			`{"name":"f","description":"Does f","inputSchema":{},"annotations":{"readOnlyHint":true}}`},
		{"wrong types ignored", `{"title":7,"readOnlyHint":"yes","destructiveHint":null,"idempotentHint":1}`, FullView,
			`{"name":"f","description":"Does f","inputSchema":{}}`},
		{"blank title ignored", `{"title":"  "}`, FullView,
			`{"name":"f","description":"Does f","inputSchema":{}}`},
		{"2025-03-26 view: title inside annotations only", `{"title":"Eff","readOnlyHint":true}`, ToolView{Annotations: true},
			`{"name":"f","description":"Does f","inputSchema":{},"annotations":{"title":"Eff","readOnlyHint":true}}`},
		{"2024-11-05 view: neither", `{"title":"Eff","readOnlyHint":true}`, ToolView{},
			`{"name":"f","description":"Does f","inputSchema":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := toolWithMetadata(t, args, tt.metadata)
			if got := mustJSON(t, tool.Object(tt.view)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// A record return's outputSchema follows the view.
func TestToolViewOutputSchema(t *testing.T) {
	tool := toolOf(t, remote("p", "m24names3agej", "", ""))
	if _, ok := tool.Object(FullView).Get("outputSchema"); !ok {
		t.Error("full view lacks outputSchema")
	}
	if _, ok := tool.Object(ToolView{Annotations: true}).Get("outputSchema"); ok {
		t.Error("a view without OutputSchema still has it")
	}
}

// toolWithMetadata is the tool of a command f of args whose metadata (a
// JSON object, or "" for none) is metadata, with an empty input schema so
// that a test's expected tool stays short.
func toolWithMetadata(t *testing.T, args, metadata string) *Tool {
	t.Helper()
	extra := ""
	if metadata != "" {
		extra = `,"metadata":` + metadata
	}
	tool := toolOf(t, remote("f", "j", args, extra))
	tool.InputSchema = Object{}
	return tool
}
