package argmap

import "testing"

// execution.taskSupport comes from metadata "taskSupport"; forbidden, the
// default, is left out so that a tool surface without tasks is unchanged.
func TestToolExecution(t *testing.T) {
	args := pos("j", "")
	tests := []struct {
		name     string
		metadata string
		view     ToolView
		support  string
		want     string
	}{
		{"none", ``, FullView, TaskForbidden,
			`{"name":"f","description":"Does f","inputSchema":{}}`},
		{"optional", `{"taskSupport":"optional"}`, FullView, TaskOptional,
			`{"name":"f","description":"Does f","inputSchema":{},"execution":{"taskSupport":"optional"}}`},
		{"required, after annotations", `{"taskSupport":"required","readOnlyHint":true}`, FullView, TaskRequired,
			`{"name":"f","description":"Does f","inputSchema":{},"annotations":{"readOnlyHint":true},"execution":{"taskSupport":"required"}}`},
		{"forbidden said aloud is still left out", `{"taskSupport":"forbidden"}`, FullView, TaskForbidden,
			`{"name":"f","description":"Does f","inputSchema":{}}`},
		{"unknown value ignored", `{"taskSupport":"sometimes"}`, FullView, TaskForbidden,
			`{"name":"f","description":"Does f","inputSchema":{}}`},
		{"not a string ignored", `{"taskSupport":true}`, FullView, TaskForbidden,
			`{"name":"f","description":"Does f","inputSchema":{}}`},
		{"a view before 2025-11-25 hides it", `{"taskSupport":"optional"}`, ToolView{Title: true, OutputSchema: true, Annotations: true}, TaskOptional,
			`{"name":"f","description":"Does f","inputSchema":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := toolWithMetadata(t, args, tt.metadata)
			if got := TaskSupport(tool.Command); got != tt.support {
				t.Errorf("TaskSupport = %q, want %q", got, tt.support)
			}
			if got := mustJSON(t, tool.Object(tt.view)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
