package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// A function that returns what its type does not say is an error, in every
// language, and its pool keeps serving (docs/mcp.md, "Results, NaN and
// infinity"): claimsInt is declared Int and returns "seven"; claimsRecord is
// declared Person and returns a person without its age (testdata/fidelity).
func TestFidelityWrongTypedResults(t *testing.T) {
	requireFidelity(t)
	s := startServer(t, program("fidelity"))
	s.handshake()
	id := 0
	call := func(name, args string) toolResult {
		id++
		return s.callRaw(id, name, args)
	}
	for _, lang := range fidelityLangs {
		for _, tc := range []struct {
			fn, want       string
			good, goodArgs string // a following good call to the same pool
			goodWant       string
		}{
			{"claimsInt", "a string where its type says integer", "idInt", `{"_1":7}`, `7`},
			{"claimsRecord", "an object without its field 'age'", "idPerson", `{"_1":{"name":"Ada","age":36}}`, `{"name":"Ada","age":36}`},
		} {
			name := tc.fn + "_" + lang
			want := fmt.Sprintf("'%s' returned %s", name, tc.want)
			for i := 0; i < 2; i++ { // twice: the first failure left the pool as it was
				if got := call(name, `{}`); !got.isError || got.text != want || got.structuredContent != nil {
					t.Errorf("%s: %q (isError %v, structuredContent %s), want isError with %q", name, got.text, got.isError, got.structuredContent, want)
				}
				good := tc.good + "_" + lang
				if got := call(good, tc.goodArgs); got.isError || got.text != tc.goodWant {
					t.Errorf("%s after %s: %q (isError %v), want %s: the pool should keep serving", good, name, got.text, got.isError, tc.goodWant)
				}
			}
			// The CLI says the same, with exit status 1.
			out, errOut, code := runNexus(t, "run", program("fidelity"), lang, name)
			if code != 1 || out != "" || !strings.Contains(errOut, "nexus: "+want+"\n") {
				t.Errorf("run %s: exit %d, stdout %q, stderr %q; want 1 and nexus: %s", name, code, out, errOut, want)
			}
		}
	}
	if err := s.closeAndWait(); err != nil {
		t.Errorf("nexus exit: %v", err)
	}
}
