package argmap

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// The hand-read forms accept exactly what their regular expressions
// accept, on chosen texts and on random ones over their alphabet.
func TestNumberTextForms(t *testing.T) {
	forms := []struct {
		name  string
		check func(string) bool
		re    *regexp.Regexp
	}{
		{"isIntLiteral", isIntLiteral, regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)},
		{"isNumberText", isNumberText, regexp.MustCompile(`^[+-]?[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?$`)},
		{"isNegativeNumber", isNegativeNumber, regexp.MustCompile(`^-([0-9.]|(?i:inf|infinity)$)`)},
	}
	texts := []string{"", "0", "-0", "00", "-", "+", "7", "-7", "+7", "07", "10", "123456789012345678901234567890",
		"1.", "1.5", ".5", "-.5", "1e3", "1E+3", "1e-3", "1e", "1e+", "1.5e3", "1.e3", "--1", "-+1", "1-", "1 ", " 1",
		"-inf", "-INF", "-Infinity", "-infinityx", "-infx", "-in", "inf", "-nan", "-x", "-1x", "-.x", "-.", "٣", "-٣", "1\n"}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0123456789+-.eEinfINFty x"
	for range 20000 {
		b := make([]byte, rng.IntN(8))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		texts = append(texts, string(b))
	}
	for _, f := range forms {
		for _, s := range texts {
			if got, want := f.check(s), f.re.MatchString(s); got != want {
				t.Errorf("%s(%q) = %v, its regexp says %v", f.name, s, got, want)
			}
		}
	}
}
