package morlocload

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// answer computes what the bench program's function returns for c's
// arguments, as funcs.py, funcs.hpp and funcs.R do: the test's independent
// reference for Check.
func answer(t *testing.T, c Call) []byte {
	t.Helper()
	nums := func(i int) []float64 {
		var xs []float64
		if err := json.Unmarshal(c.Args[i], &xs); err != nil {
			t.Fatalf("%s argument %d: %v", c.Tool, i+1, err)
		}
		return xs
	}
	num := func(i int) float64 {
		f, err := strconv.ParseFloat(string(c.Args[i]), 64)
		if err != nil {
			t.Fatalf("%s argument %d: %v", c.Tool, i+1, err)
		}
		return f
	}
	var out []float64
	switch c.Tool {
	case "echoPy":
		out = nums(0)
	case "scaleCpp":
		for _, x := range nums(1) {
			out = append(out, num(0)*x)
		}
	case "rangePy", "rampR":
		for j := range int(num(0)) {
			out = append(out, num(1)+float64(j))
		}
	case "sleepPy":
		return c.Args[0]
	default:
		t.Fatalf("unknown tool %s", c.Tool)
	}
	b, _ := json.Marshal(out)
	return b
}

func TestMixedCallsAreRightAndTheirOwn(t *testing.T) {
	tests := []struct {
		n     int
		langs []string
		tools []string // the first calls' tools, in order
	}{
		{48, nil, []string{"echoPy", "scaleCpp", "rangePy", "rampR", "echoPy"}},
		{6, []string{"py", "cpp"}, []string{"echoPy", "scaleCpp", "rangePy", "echoPy"}},
		{3, []string{"r"}, []string{"rampR", "rampR", "rampR"}},
	}
	for _, tt := range tests {
		calls := Mixed(tt.n, tt.langs...)
		if len(calls) != tt.n {
			t.Fatalf("Mixed(%d, %v): %d calls", tt.n, tt.langs, len(calls))
		}
		for i, tool := range tt.tools {
			if calls[i].Tool != tool {
				t.Errorf("Mixed(%d, %v)[%d] is %s, want %s", tt.n, tt.langs, i, calls[i].Tool, tool)
			}
		}
		answers := make([][]byte, len(calls))
		for i, c := range calls {
			answers[i] = answer(t, c)
		}
		for i, c := range calls {
			if err := c.Check(answers[i]); err != nil {
				t.Errorf("call %d (%s): its right answer is refused: %v", i, c.Tool, err)
			}
			// More than 64 KiB as morloc 0.69 lays it out.
			width := 8
			if c.Tool == "rangePy" {
				width = 4
			}
			if c.n*width <= 64<<10 {
				t.Errorf("call %d (%s): %d elements of %d bytes stay under 64 KiB", i, c.Tool, c.n, width)
			}
			// Every other call's answer is refused: none is any other's.
			for k, o := range calls {
				if k != i && c.Tool == o.Tool && c.Check(answers[k]) == nil {
					t.Errorf("call %d (%s) accepts call %d's answer", i, c.Tool, k)
				}
			}
		}
	}
	if calls := Mixed(4, "julia"); len(calls) != 0 {
		t.Errorf("Mixed for no known language: %d calls", len(calls))
	}
}

func TestCheckRefuses(t *testing.T) {
	c := Mixed(2)[1] // scaleCpp
	right := string(answer(t, c))
	tests := []struct {
		name, result, want string
	}{
		{"empty list", "[]", "0 elements, want 10000"},
		{"one element off", strings.Replace(right, "[1.5,", "[2,", 1), "element 0 is 2, want 1.5"},
		{"not a list", `"x"`, "not a list of numbers"},
		{"an error text", "null", "0 elements"},
	}
	for _, tt := range tests {
		err := c.Check([]byte(tt.result))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	s := Sleep(0.3)
	if err := s.Check([]byte("0.3")); err != nil {
		t.Errorf("sleepPy 0.3: %v", err)
	}
	if err := s.Check([]byte("0.30000000000000004")); err == nil {
		t.Error("sleepPy 0.3 accepted 0.30000000000000004")
	}
}

func TestArgumentsAndList(t *testing.T) {
	c := Call{Tool: "divCpp", Args: []json.RawMessage{json.RawMessage("7"), json.RawMessage("[1,2]")}}
	if got, want := string(c.Arguments()), `{"_1":7,"_2":[1,2]}`; got != want {
		t.Errorf("Arguments: %s, want %s", got, want)
	}
	if got, want := string(c.List()), `[7,[1,2]]`; got != want {
		t.Errorf("List: %s, want %s", got, want)
	}
	if got, want := string(Sleep(0.3).Arguments()), `{"_1":0.3}`; got != want {
		t.Errorf("Sleep(0.3).Arguments: %s, want %s", got, want)
	}
}
