package argmap

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkToPositionalLargeList measures a call carrying 100k integers.
func BenchmarkToPositionalLargeList(b *testing.B) {
	tool := jsonHelpTool(b, "sumMany")
	var sb strings.Builder
	sb.WriteString(`{"_1":[`)
	for i := 0; i < 100000; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.Itoa(i * 7919))
	}
	sb.WriteString(`]}`)
	args := json.RawMessage(sb.String())
	b.SetBytes(int64(len(args)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tool.ToPositional(args); err != nil {
			b.Fatal(err)
		}
	}
}
