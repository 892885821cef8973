package argmap

import "strings"

// The forms of number text argmap checks, read by hand: compiling them as
// regular expressions at package initialisation cost every nexus start,
// a one-shot CLI call included, more than checking them does.

// isIntLiteral reports whether text is a JSON integer: -?(0|[1-9][0-9]*).
func isIntLiteral(text string) bool {
	digits := strings.TrimPrefix(text, "-")
	if digits == "" || digits[0] == '0' && len(digits) > 1 {
		return false
	}
	return allDigits(digits)
}

// isNumberText reports whether text is a number as JSON writes it or as a
// CLI user types it (a leading '+', leading zeros, "5."):
// [+-]?[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?.
func isNumberText(text string) bool {
	if text != "" && (text[0] == '+' || text[0] == '-') {
		text = text[1:]
	}
	i := skipDigits(text, 0)
	if i == 0 {
		return false
	}
	if i < len(text) && text[i] == '.' {
		i = skipDigits(text, i+1)
	}
	if i < len(text) && (text[i] == 'e' || text[i] == 'E') {
		i++
		if i < len(text) && (text[i] == '+' || text[i] == '-') {
			i++
		}
		j := skipDigits(text, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(text)
}

// isNegativeNumber reports whether a token that starts with '-' is a
// negative number rather than an option: -, then a digit or '.', or
// -inf, -infinity in any case.
func isNegativeNumber(tok string) bool {
	rest, ok := strings.CutPrefix(tok, "-")
	if !ok || rest == "" {
		return false
	}
	if c := rest[0]; c >= '0' && c <= '9' || c == '.' {
		return true
	}
	return strings.EqualFold(rest, "inf") || strings.EqualFold(rest, "infinity")
}

func allDigits(s string) bool { return skipDigits(s, 0) == len(s) }

// skipDigits returns the index of the first non-digit of s from i on.
func skipDigits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
