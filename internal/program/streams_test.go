package program

import (
	"bytes"
	"encoding/json"
	"testing"
)

// A @stdout stream prints as morloc's nexus prints it with -f json: one
// JSON array of every element written, [] for none.
func TestJSONStdout(t *testing.T) {
	tests := []struct {
		name    string
		batches []string // each written, then flushed
		want    string
	}{
		{"none", nil, "[]\n"},
		{"one batch", []string{"[1,2]"}, "[1,2]\n"},
		{"batches, an empty one among them", []string{"[1]", "[]", "[2,3]"}, "[1,2,3]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			s, err := (&runStreams{stdout: &out}).Std("stdout", "aj")
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range tt.batches {
				if err := s.Write(0, json.RawMessage(b)); err != nil {
					t.Fatal(err)
				}
				if err := s.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("stdout %q, want %q", out.String(), tt.want)
			}
		})
	}
	// Over MCP stdout is the protocol's.
	if _, err := (&runStreams{}).Std("stdout", "aj"); err == nil {
		t.Error("a @stdout stream opened where there is no stdout for it")
	}
}

// A tool call that wrote files names them: its value as text (none for
// null), then a resource_link a file.
func TestWrittenBlocks(t *testing.T) {
	files := []writtenFile{{path: "/out/a.bin", schema: "aj", elements: 3}}
	tests := []struct {
		value string
		kinds []string
	}{
		{"5", []string{"text", "resource_link"}},
		{"null", []string{"resource_link"}},
	}
	for _, tt := range tests {
		var blocks []map[string]any
		if err := json.Unmarshal(writtenBlocks(json.RawMessage(tt.value), files), &blocks); err != nil {
			t.Fatal(err)
		}
		if len(blocks) != len(tt.kinds) {
			t.Fatalf("value %s: blocks %v, want kinds %v", tt.value, blocks, tt.kinds)
		}
		for i, k := range tt.kinds {
			if blocks[i]["type"] != k {
				t.Errorf("value %s: block %d is %v, want %s", tt.value, i, blocks[i]["type"], k)
			}
		}
		if link := blocks[len(blocks)-1]; link["uri"] != "file:///out/a.bin" || link["name"] != "a.bin" {
			t.Errorf("link %v, want file:///out/a.bin named a.bin", link)
		}
	}
}
