package install

import (
	"fmt"
	"strings"
)

// Diff is the plan as a unified diff (what --dry-run prints); "" when it
// changes nothing.
func (p *Plan) Diff() string {
	if !p.Changed() {
		return ""
	}
	from := p.Path
	if !p.exists {
		from = "/dev/null"
	}
	return unifiedDiff(from, p.Path, string(p.Before), string(p.After), 3)
}

// unifiedDiff compares two texts line by line. Config edits touch one
// place, so the common head and tail are taken off first and only the
// middle is compared (a longest common subsequence, small there).
func unifiedDiff(fromName, toName, a, b string, context int) string {
	x, y := splitLines(a), splitLines(b)
	head := 0
	for head < len(x) && head < len(y) && x[head] == y[head] {
		head++
	}
	tail := 0
	for tail < len(x)-head && tail < len(y)-head && x[len(x)-1-tail] == y[len(y)-1-tail] {
		tail++
	}
	ops := lcsOps(x[head:len(x)-tail], y[head:len(y)-tail])
	// The whole script: equal lines around, the middle's edits between.
	type op struct {
		kind byte // ' ', '-', '+'
		text string
	}
	var script []op
	for _, l := range x[:head] {
		script = append(script, op{' ', l})
	}
	for _, o := range ops {
		script = append(script, op{o.kind, o.text})
	}
	for _, l := range x[len(x)-tail:] {
		script = append(script, op{' ', l})
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", fromName, toName)
	// Hunks: edits less than 2*context equal lines apart go together,
	// with context equal lines around.
	var changed []int
	for i, o := range script {
		if o.kind != ' ' {
			changed = append(changed, i)
		}
	}
	for k := 0; k < len(changed); {
		last := k
		for last+1 < len(changed) && changed[last+1]-changed[last] <= 2*context+1 {
			last++
		}
		start, end := max(0, changed[k]-context), min(len(script), changed[last]+1+context)
		aStart, bStart, aLen, bLen := 1, 1, 0, 0
		for _, o := range script[:start] {
			if o.kind != '+' {
				aStart++
			}
			if o.kind != '-' {
				bStart++
			}
		}
		for _, o := range script[start:end] {
			if o.kind != '+' {
				aLen++
			}
			if o.kind != '-' {
				bLen++
			}
		}
		if aLen == 0 {
			aStart--
		}
		if bLen == 0 {
			bStart--
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", aStart, aLen, bStart, bLen)
		for _, o := range script[start:end] {
			out.WriteByte(o.kind)
			out.WriteString(o.text)
			if !strings.HasSuffix(o.text, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		k = last + 1
	}
	return out.String()
}

// splitLines keeps each line's "\n".
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

type lineOp struct {
	kind byte
	text string
}

// lcsOps turns x into y with the fewest deletions and insertions.
func lcsOps(x, y []string) []lineOp {
	n, m := len(x), len(y)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []lineOp
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			ops = append(ops, lineOp{' ', x[i]})
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]): // deletions first, as diff -u
			ops = append(ops, lineOp{'-', x[i]})
			i++
		default:
			ops = append(ops, lineOp{'+', y[j]})
			j++
		}
	}
	return ops
}
