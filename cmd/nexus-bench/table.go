package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"
)

// Sections of the table, in print order.
const (
	secSmall       = "small calls"
	secConcurrency = "concurrency"
	secLarge       = "large data"
	secStartup     = "start-up"
	secMemory      = "memory"
	secHTTP        = "HTTP"
)

var sectionOrder = []string{secSmall, secConcurrency, secLarge, secStartup, secMemory, secHTTP, secMorloc}

// row is one line of the table: a measured value, the floor it compares
// with (NaN: none) and how it compares.
type row struct {
	section, lang, what string
	value               float64
	text                string // replaces the value: WRONG, FAILED, skipped
	unit                string
	floor               float64
	vs                  string // "×5.49" or "+15.2 ms"
	details             string
}

var none = math.NaN()

// ratio formats value ÷ floor.
func ratio(value, floor float64) string {
	if math.IsNaN(floor) || floor <= 0 || math.IsNaN(value) {
		return ""
	}
	return "×" + num(value/floor)
}

// diff formats value − floor with a unit.
func diff(value, floor float64, unit string) string {
	if math.IsNaN(floor) || math.IsNaN(value) {
		return ""
	}
	d := value - floor
	sign := "+"
	if d < 0 {
		sign = "−"
		d = -d
	}
	return sign + num(d) + " " + unit
}

// num prints a figure with about three significant digits, never in
// exponent form, so that the table stays readable and parseable.
func num(f float64) string {
	switch a := math.Abs(f); {
	case math.IsNaN(f):
		return ""
	case a >= 100 || a == 0:
		return fmt.Sprintf("%.0f", f)
	case a >= 10:
		return fmt.Sprintf("%.1f", f)
	case a >= 1:
		return fmt.Sprintf("%.2f", f)
	case a >= 0.01:
		return fmt.Sprintf("%.3f", f)
	default:
		return fmt.Sprintf("%.5f", f)
	}
}

func (r row) cells() []string {
	v := r.text
	if v == "" {
		v = num(r.value)
	}
	floor := ""
	if !math.IsNaN(r.floor) {
		floor = num(r.floor)
	}
	lang := r.lang
	if lang == "" {
		lang = "nexus"
	}
	cells := []string{r.section, lang, r.what, v, r.unit, floor, r.vs, r.details}
	for i, c := range cells {
		cells[i] = cellText.Replace(c)
	}
	return cells
}

// cellText keeps a cell on its line and inside its column: a pool's
// error message quoted in the details may hold newlines and bars.
var cellText = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "|", "/")

var header = []string{"section", "lang", "measure", "value", "unit", "floor", "vs floor", "details"}

// writeTable prints the rows as one Markdown table, columns padded so that
// it reads as plain text too. Numeric columns are right-aligned.
func writeTable(w io.Writer, rows []row) {
	bySection := map[string][]row{}
	for _, r := range rows {
		bySection[r.section] = append(bySection[r.section], r)
	}
	var lines [][]string
	for _, s := range sectionOrder {
		for _, r := range bySection[s] {
			lines = append(lines, r.cells())
		}
	}
	width := make([]int, len(header))
	for i, h := range header {
		width[i] = utf8.RuneCountInString(h)
	}
	for _, l := range lines {
		for i, c := range l {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	right := map[int]bool{3: true, 5: true, 6: true}
	pad := func(s string, i int) string {
		gap := strings.Repeat(" ", width[i]-utf8.RuneCountInString(s))
		if right[i] {
			return gap + s
		}
		return s + gap
	}
	printLine := func(cells []string) {
		var b strings.Builder
		b.WriteString("|")
		for i, c := range cells {
			b.WriteString(" " + pad(c, i) + " |")
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	printLine(header)
	var sep strings.Builder
	sep.WriteString("|")
	for i := range header {
		dash := strings.Repeat("-", width[i])
		if right[i] {
			dash = dash[:len(dash)-1] + ":"
		}
		sep.WriteString(" " + dash + " |")
	}
	fmt.Fprintln(w, sep.String())
	for _, l := range lines {
		printLine(l)
	}
}
