package mcp

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 100)
	in := "a\r\n\nb\n" + long + "\n" + "c\n" + strings.Repeat("y", 50) + "\nlast"
	lr := NewLineReader(iotest.OneByteReader(strings.NewReader(in)), 64)
	want := []struct {
		line string
		err  error
	}{{"a", nil}, {"", nil}, {"b", nil}, {"", ErrLineTooLong}, {"c", nil}, {strings.Repeat("y", 50), nil}, {"last", nil}, {"", io.EOF}}
	for i, w := range want {
		got, err := lr.Next()
		if !errors.Is(err, w.err) || (err == nil && string(got) != w.line) {
			t.Fatalf("line %d: got %q, %v; want %q, %v", i, got, err, w.line, w.err)
		}
	}
}

// A line far longer than the reader's buffer but under the cap comes back whole.
func TestLineReaderLargeLine(t *testing.T) {
	big := strings.Repeat("z", 5<<20)
	lr := NewLineReader(strings.NewReader(big+"\nnext\n"), 8<<20)
	got, err := lr.Next()
	if err != nil || len(got) != len(big) {
		t.Fatalf("got %d bytes, %v; want %d", len(got), err, len(big))
	}
	got, err = lr.Next()
	if err != nil || string(got) != "next" {
		t.Fatalf("after the big line: %q, %v", got, err)
	}
}

func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nb\r\n\n"), 4)
	f.Add([]byte(strings.Repeat("q", 300)+"\nx"), 16)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		if max <= 0 || max > 1<<16 {
			max = 64
		}
		lr := NewLineReader(strings.NewReader(string(data)), max)
		total := 0
		for i := 0; i <= len(data)+1; i++ {
			line, err := lr.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err == nil && len(line) > max {
				t.Fatalf("line of %d bytes over the cap %d", len(line), max)
			}
			total += len(line)
			if total > len(data) {
				t.Fatalf("returned more bytes than were read")
			}
		}
		t.Fatalf("reader did not reach EOF")
	})
}

// The runner reuses an idle goroutine, starts one when none is idle (so
// calls still run at once), and waits for all.
func TestRunner(t *testing.T) {
	r := newRunner()
	defer r.Close()
	release := make(chan struct{})
	started := make(chan int, 3)
	for i := range 3 {
		r.Go(func() { started <- i; <-release })
	}
	for range 3 {
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatal("three functions did not run at once")
		}
	}
	close(release)
	r.Wait()
	ran := make(chan struct{})
	r.Go(func() { close(ran) })
	<-ran
	r.Wait()
}
