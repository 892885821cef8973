package program

import (
	"strings"
	"testing"
)

// A pure command that cannot run is left off the tool surface with why,
// and kept for GET /discover; the program's other commands stay tools.
func TestLoadLeavesRefusedPureCommandsOut(t *testing.T) {
	p := load(t, exampleProgram("pure"))
	refused := map[string]string{
		"binInt": golden(t, 24, "binInt", "binInt").Refusal,
		"binTup": golden(t, 24, "binTup", "binTup").Refusal,
	}
	tools := map[string]bool{}
	for _, tool := range p.Tools {
		tools[tool.Name] = true
	}
	for name, why := range refused {
		if tools[name] {
			t.Errorf("%s is a tool; it cannot run", name)
		}
		found := false
		for _, e := range p.Excluded {
			if e.Command == name {
				found = true
				if !strings.HasPrefix(e.Reason, "uses "+why) {
					t.Errorf("%s excluded because %q, want \"uses %s...\"", name, e.Reason, why)
				}
			}
		}
		if !found {
			t.Errorf("%s is not among the excluded commands %+v", name, p.Excluded)
		}
	}
	for i := range p.Manifest.Commands {
		c := &p.Manifest.Commands[i]
		if _, no := refused[c.Name]; !no && !c.Internal && !tools[c.Name] {
			t.Errorf("%s is no tool", c.Name)
		}
	}
}
