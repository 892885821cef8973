package mcp

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

// Regression: a line far over the cap costs about the cap in allocations,
// not a buffer grown and regrown up to it (whose outgrown copies stayed in
// the process's memory: 244 MB resident for a 100 MiB line at a 64 MiB cap).
func TestLineReaderOversizedLineMemory(t *testing.T) {
	const limit = 1 << 20
	line := bytes.Repeat([]byte("x"), 10*limit)
	in := append(append(line, '\n'), "next\n"...)
	lr := NewLineReader(bytes.NewReader(in), limit)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := lr.Next()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("Next: %v, want ErrLineTooLong", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 2*limit {
		t.Errorf("dropping a line of 10x the cap allocated %d bytes, want at most 2x the cap (%d)", got, 2*limit)
	}
	if got, err := lr.Next(); err != nil || string(got) != "next" {
		t.Errorf("after the long line: %q, %v", got, err)
	}
}

// The cap counts the line's bytes before its "\n", and holds for a last
// line that has none.
func TestLineReaderCapAtEnd(t *testing.T) {
	tests := []struct {
		in   string
		want []string // "!" for ErrLineTooLong
	}{
		{"abcd\n", []string{"abcd"}},
		{"abcde\n", []string{"!"}},
		{"abcd", []string{"abcd"}},
		{"abcde", []string{"!"}},
		{"abc\r\n", []string{"abc"}},
		{"abcd\r\n", []string{"!"}},
		{"ab\nabcdefgh\ncd", []string{"ab", "!", "cd"}},
	}
	for _, tt := range tests {
		lr := NewLineReader(strings.NewReader(tt.in), 4)
		var got []string
		for {
			line, err := lr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if errors.Is(err, ErrLineTooLong) {
				got = append(got, "!")
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(line))
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("%q: lines %q, want %q", tt.in, got, tt.want)
		}
	}
}
