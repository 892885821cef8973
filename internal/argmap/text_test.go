package argmap

import (
	"errors"
	"strings"
	"testing"
)

// Prompt arguments and template variables are strings: each is read by
// its property's type, as the command line reads a token, and the result
// passes ToPositional like any tools/call's arguments.
func TestArgumentsFromText(t *testing.T) {
	tool := toolOf(t, remote("f", "s",
		pos("s", `,"name":"label"`)+","+pos("j", `,"name":"n"`)+","+pos("?f8", `,"name":"x"`)+","+pos("aj", `,"name":"xs"`)+","+
			opt("b", "strict", `"false"`, "")+","+flagArg("loud", "false", ""), ""))
	tests := []struct {
		in   map[string]string
		want string // the arguments, or the error
	}{
		{map[string]string{"label": "42", "n": "42", "x": "2.5", "xs": "[1,2]"}, `{"label":"42","n":42,"x":2.5,"xs":[1,2]}`},
		{map[string]string{"label": `"quoted"`, "n": "-7"}, `{"label":"\"quoted\"","n":-7}`}, // a Str is taken as it is
		{map[string]string{"x": "null", "strict": "true", "loud": "true"}, `{"loud":true,"strict":true,"x":null}`},
		{map[string]string{"x": "nan"}, `{"x":"NaN"}`},
		{map[string]string{"n": "ten"}, `argument 'n' of 'f': expected an integer, got "ten"`},
		{map[string]string{"strict": "yes"}, `argument 'strict' of 'f': expected true or false, got "yes"`},
		{map[string]string{"xs": "1,2"}, `argument 'xs' of 'f': expected JSON (array), got "1,2"`},
		{map[string]string{"other": "v"}, `{"other":"v"}`}, // left to ToPositional to refuse
	}
	for _, tt := range tests {
		got, err := tool.ArgumentsFromText(tt.in)
		if err != nil {
			var ae *ArgError
			if !errors.As(err, &ae) || err.Error() != tt.want {
				t.Errorf("%v: error %v, want %s", tt.in, err, tt.want)
			}
			continue
		}
		if string(got) != tt.want {
			t.Errorf("%v: %s, want %s", tt.in, got, tt.want)
		}
	}
	args, _ := tool.ArgumentsFromText(map[string]string{"label": "a", "n": "1", "other": "v"})
	if _, err := tool.ToPositional(args); err == nil || !strings.Contains(err.Error(), "unexpected argument 'other' of 'f'") {
		t.Errorf("an unknown name reaches ToPositional and is refused there: %v", err)
	}
}

func TestProperties(t *testing.T) {
	tool := toolOf(t, remote("f", "s", pos("s", `,"name":"label","desc":["The label"]`)+","+flagArg("loud", "false", ""), ""))
	props := tool.Properties()
	if len(props) != 2 {
		t.Fatalf("properties: %+v", props)
	}
	if p := props[0]; p.Name != "label" || !p.Required || p.Description != "The label" || p.Type == nil || p.Enum != nil {
		t.Errorf("label: %+v", p)
	}
	if p := props[1]; p.Name != "loud" || p.Required || strings.Join(p.Enum, ",") != "false,true" {
		t.Errorf("a flag enumerates its values: %+v", p)
	}
}
