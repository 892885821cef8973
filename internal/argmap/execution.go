package argmap

import (
	"encoding/json"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// Task support of a tool (MCP 2025-11-25, tools/list execution.taskSupport):
// whether a client may, must or must not call it as a task.
const (
	TaskForbidden = "forbidden"
	TaskOptional  = "optional"
	TaskRequired  = "required"
)

// TaskSupport reads a command's metadata "taskSupport": "optional" or
// "required"; anything else (absent, another value, not a string) is
// "forbidden", MCP's default, which the tool object leaves unsaid.
func TaskSupport(c *manifest.Command) string {
	raw, ok := c.Metadata["taskSupport"]
	if !ok {
		return TaskForbidden
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || (s != TaskOptional && s != TaskRequired) {
		return TaskForbidden
	}
	return s
}

// execution is the tool's MCP ToolExecution object, nil when the tool
// allows no task (so that a tool surface without tasks is unchanged).
func (t *Tool) execution() Object {
	if t.Command == nil {
		return nil
	}
	if s := TaskSupport(t.Command); s != TaskForbidden {
		return Object{{"taskSupport", s}}
	}
	return nil
}
