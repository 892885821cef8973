package manifest

import (
	"errors"
	"strings"
	"testing"
)

// The argument fields and top-level fields of a manifest the real morloc
// 0.98.2 compiler wrote (testdata/morloc/args-pure, args-toplevel).
func TestArgFieldsFromCompiler(t *testing.T) {
	m, err := Load("../../testdata/morloc/args-pure/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		cmd                  string
		source, form         string
		checks               string
		listSource, listForm string
		listChecks           string
		format               string
	}{
		{"fileText", "file", "auto", "", "inline", "auto", "", "read the value from the file at this path"},
		{"readablePath", "inline", "auto", "path:r", "inline", "auto", "", "path to a readable file"},
		{"packedBytes", "auto", "bytes", "", "inline", "auto", "", "path to readable file (morloc packet or raw binary)"},
		{"dnaBytes", "inline", "bytes", "", "inline", "auto", "", "literal byte sequence with escapes allowed"},
		{"checkedLines", "auto", "list", "", "inline", "auto", "path:r", "path to text file with one string per line; path to a readable file"},
		{"packetInts", "auto", "list", "", "file", "packet", "", "path to text file; each line a morloc packet filename"},
		{"tokens", "auto", "auto", "", "inline", "auto", "", "one or more argv tokens, each parsed as the element type"},
	}
	checks := func(cs []Check) string {
		var s []string
		for _, c := range cs {
			s = append(s, c.Kind+":"+c.Value)
		}
		return strings.Join(s, ",")
	}
	for _, c := range cases {
		a := m.Command(c.cmd).Args[0]
		format := ""
		if a.Format != nil {
			format = *a.Format
		}
		got := []string{a.Source, a.Form, checks(a.Checks), a.ListSource, a.ListForm, checks(a.ListChecks), format}
		want := []string{c.source, c.form, c.checks, c.listSource, c.listForm, c.listChecks, c.format}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: %q, want %q", c.cmd, got, want)
		}
		if m.Command(c.cmd).Fault != nil {
			t.Errorf("%s: fault %v", c.cmd, m.Command(c.cmd).Fault)
		}
	}
	if a := m.Command("fileText").Args[0]; !a.IsPath() || !a.Shaped() {
		t.Errorf("fileText: IsPath %v, Shaped %v", a.IsPath(), a.Shaped())
	}
	if a := m.Command("tokens").Args[0]; a.Shaped() || a.IsPath() {
		t.Errorf("tokens is shaped")
	}
	entry := m.Command("settings").Args[0].Entries[2].Arg
	if entry.PathMode() != "r" || !entry.Shaped() {
		t.Errorf("settings.input: mode %q", entry.PathMode())
	}
	if k := m.Command("settings").Args[0].Constraints; len(k) != 1 || k[0].String() != `kind "record"` {
		t.Errorf("settings constraints %v", k)
	}
	if len(m.Capabilities) != 1 || m.Capabilities[0] != "log" || m.RunLog != nil || m.UnsafeSkipNullCheck || len(m.Unread) != 0 || len(m.Ignored) != 0 {
		t.Errorf("top level: %v %v %v %v %v", m.Capabilities, m.RunLog, m.UnsafeSkipNullCheck, m.Unread, m.Ignored)
	}

	top, err := Load("../../testdata/morloc/args-toplevel/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(top.Epilogues) != 2 || top.Epilogues[1][0] != "Built with --inline-size 4k --no-shm --unsafe-skip-null-check --debug." ||
		!top.UnsafeSkipNullCheck || *top.InlineSize != 4096 || !top.NoShm || top.TmpDir != "/tmp/args-toplevel-files" ||
		strings.Join(top.Capabilities, ",") != "log,debug_trace" || top.RunLog == nil || *top.RunLog.Prologue != "[run] {name} starts (pid {pid})" ||
		*top.RunLog.EpilogueFail != "[run] {name} failed: {error} (exit {exit_code})" {
		t.Errorf("args-toplevel: %+v", top)
	}
	if !top.Pools[0].AllowStringNull || top.Pools[1].AllowStringNull {
		t.Errorf("allow_string_null %v %v", top.Pools[0].AllowStringNull, top.Pools[1].AllowStringNull)
	}
}

// A value nexus does not know faults its command alone, with the JSON
// path; the defaults fill absent fields; a shape on a many argument is
// noted as ignored.
func TestArgFieldFaults(t *testing.T) {
	arg := func(extra string) string {
		return `{"name":"c","type":"remote","mid":1,"pool":0,"args":[{"kind":"pos","schema":"as","desc":[]` + extra + `}],"return":{"schema":"j"}}`
	}
	ok := `{"name":"ok","type":"remote","mid":2,"pool":0,"args":[{"kind":"pos","schema":"s"}],"return":{"schema":"j"}}`
	parse := func(cmd string, top string) *Manifest {
		t.Helper()
		m, err := Parse("/p/manifest.json", []byte(`{"name":"p","pools":[{"lang":"py","exec":["python3"]}],"commands":[`+cmd+`,`+ok+`]`+top+`}`))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for extra, want := range map[string]string{
		`,"source":"http"`:                               `at commands[0].args[0].source: unknown source "http" (nexus knows "auto", "inline", "file")`,
		`,"form":"zip"`:                                  `at commands[0].args[0].form: unknown form "zip"`,
		`,"list_source":"cloud"`:                         `at commands[0].args[0].list_source: unknown source "cloud"`,
		`,"list_form":"list"`:                            `at commands[0].args[0].list_form: unknown per-element form "list" (nexus knows "auto", "packet", "bytes", "bytes-only")`,
		`,"checks":[{"kind":"size","value":"1"}]`:        `at commands[0].args[0].checks[0].kind: unknown check "size" (nexus knows "path")`,
		`,"list_checks":[{"kind":"path","value":"rwx"}]`: `at commands[0].args[0].list_checks[0].value: unknown path mode "rwx" (nexus knows "r", "w", "x", "rw")`,
	} {
		m := parse(arg(extra), "")
		f := m.Commands[0].Fault
		if f == nil || !strings.Contains(f.Error(), want) {
			t.Errorf("%s: fault %v, want %q", extra, f, want)
		}
		if m.Commands[1].Fault != nil {
			t.Errorf("%s: the other command faulted too", extra)
		}
	}
	// A check's value must be a string: a shape error refuses the manifest.
	_, err := Parse("/p/manifest.json", []byte(`{"name":"p","pools":[{"lang":"py","exec":["python3"]}],"commands":[`+arg(`,"checks":[{"kind":"path","value":1}]`)+`]}`))
	var e *Error
	if !errors.As(err, &e) || e.Path != "commands[0].args[0].checks[0].value" {
		t.Errorf("a numeric check value: %v", err)
	}
	// Defaults: a Str or scalar reads inline, the rest auto; the list
	// fields inline and auto; capabilities ["log"]; allow_string_null true.
	m := parse(arg(""), "")
	if a, b := m.Commands[0].Args[0], m.Commands[1].Args[0]; a.Source != "auto" || b.Source != "inline" || a.Form != "auto" || a.ListSource != "inline" || a.ListForm != "auto" || a.Shaped() || b.Shaped() {
		t.Errorf("defaults: %+v / %+v", a, b)
	}
	if len(m.Capabilities) != 1 || m.Capabilities[0] != "log" || !m.Pools[0].AllowStringNull {
		t.Errorf("top-level defaults: %v %v", m.Capabilities, m.Pools[0].AllowStringNull)
	}
	m = parse(strings.Replace(arg(`,"many":true,"list_form":"packet"`), `"many"`, `"many"`, 1), `,"capabilities":[],"future_field":1`)
	if len(m.Ignored) != 1 || !strings.Contains(m.Ignored[0], "commands[0].args[0]: source, form and checks on a many argument") {
		t.Errorf("ignored %v", m.Ignored)
	}
	if len(m.Capabilities) != 0 || strings.Join(m.Unread, ",") != "future_field" {
		t.Errorf("capabilities %v, unread %v", m.Capabilities, m.Unread)
	}
}
