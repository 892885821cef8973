package pool

import (
	"encoding/json"
	"testing"
)

// The protocol carries UTF-8 only: invalid bytes in arguments reach the
// function as U+FFFD instead of breaking the pool's decoder.
func TestInvalidUTF8Arguments(t *testing.T) {
	ts := startTestPool(t)
	got := ts.mustCall(t, midEcho, json.RawMessage("\"a\xffb\""), json.RawMessage("{\"k\xc3\":[\"\xfe\"]}"), json.RawMessage(`"ok é"`))
	if want := `["a` + "\uFFFD" + `b",{"k` + "\uFFFD" + `":["` + "\uFFFD" + `"]},"ok é"]`; string(got) != want {
		t.Errorf("echo = %s, want %s", got, want)
	}
	if got := ts.mustCall(t, midAddOne, 1); string(got) != "2" {
		t.Errorf("the pool after invalid UTF-8: add_one(1) = %s", got)
	}
}

func TestValidUTF8KeepsValidArguments(t *testing.T) {
	args := []json.RawMessage{json.RawMessage(`"é"`), json.RawMessage(`1`)}
	if got := validUTF8(args); &got[0] != &args[0] {
		t.Error("valid arguments were copied")
	}
	bad := []json.RawMessage{json.RawMessage(`1`), json.RawMessage("\"\xff\"")}
	got := validUTF8(bad)
	if string(got[1]) != "\"\uFFFD\"" || string(bad[1]) != "\"\xff\"" {
		t.Errorf("validUTF8 gave %q and left the caller's %q; want a fixed copy", got[1], bad[1])
	}
}
