package argmap

import "testing"

// Integers of every size and form, by the short path (shortIntLiteral) or
// the long one alike: passed byte for byte, made canonical, or refused
// outside a sized type's range, with one message.
func TestNormalizeInt(t *testing.T) {
	tests := []struct{ text, code, out, msg string }{
		{"42", "i4", "42", ""},
		{"-0", "j", "-0", ""},
		{"0", "u1", "0", ""},
		{"2147483647", "i4", "2147483647", ""},
		{"-2147483648", "i4", "-2147483648", ""},
		{"2147483648", "i4", "", "expected an integer from -2147483648 to 2147483647 (i4), got 2147483648"},
		{"-2147483649", "i4", "", "expected an integer from -2147483648 to 2147483647 (i4), got -2147483649"},
		{"-1", "u1", "", "expected an integer from 0 to 255 (u1), got -1"},
		{"999999999999999999", "i8", "999999999999999999", ""},
		{"9223372036854775808", "i8", "", "expected an integer from -9223372036854775808 to 9223372036854775807 (i8), got 9223372036854775808"},
		{"18446744073709551615", "u8", "18446744073709551615", ""},
		{"123456789012345678901234567890", "j", "123456789012345678901234567890", ""},
		{"2.0", "i4", "2", ""},
		{"1e3", "j", "1000", ""},
		{"2.5", "j", "", "expected integer, got number 2.5"},
		{"007", "j", "7", ""},
	}
	for _, tt := range tests {
		out, msg := normalizeInt(tt.text, tt.code)
		if out != tt.out || msg != tt.msg {
			t.Errorf("normalizeInt(%q, %s) = %q, %q; want %q, %q", tt.text, tt.code, out, msg, tt.out, tt.msg)
		}
	}
}
