package clientconfig

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func compact(t *testing.T, b []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return out.String()
}

func lookupIn(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

func TestEnv(t *testing.T) {
	got := Env(lookupIn(map[string]string{
		"PATH": "/opt/conda/bin:/usr/bin", "CONDA_PREFIX": "/opt/conda", "VIRTUAL_ENV": "",
		"R_LIBS_USER": "~/R", "HOME": "/root", "PYTHONPATH": "/src",
	}))
	want := map[string]string{"PATH": "/opt/conda/bin:/usr/bin", "CONDA_PREFIX": "/opt/conda", "R_LIBS_USER": "~/R", "PYTHONPATH": "/src"}
	if len(got) != len(want) {
		t.Fatalf("Env = %v, want %v (set and non-empty names of EnvNames only)", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Env[%s] = %q, want %q", k, got[k], v)
		}
	}
}

func TestStdio(t *testing.T) {
	s := Stdio{Name: "combat", Nexus: "/usr/local/bin/nexus", Manifest: "/home/u/combat/manifest.json",
		Env: map[string]string{"PATH": "/opt/conda/bin:/usr/bin", "CONDA_PREFIX": "/opt/conda"}}
	want := `{"mcpServers":{"combat":{"command":"/usr/local/bin/nexus","args":["mcp","/home/u/combat/manifest.json"],"env":{"CONDA_PREFIX":"/opt/conda","PATH":"/opt/conda/bin:/usr/bin"}}}}`
	if got := compact(t, s.JSON()); got != want {
		t.Errorf("JSON = %s\nwant   %s", got, want)
	}
	wantWSL := `{"mcpServers":{"combat":{"command":"wsl.exe","args":["-e","env","CONDA_PREFIX=/opt/conda","PATH=/opt/conda/bin:/usr/bin","/usr/local/bin/nexus","mcp","/home/u/combat/manifest.json"]}}}`
	if got := compact(t, s.WSLJSON()); got != wantWSL {
		t.Errorf("WSLJSON = %s\nwant      %s", got, wantWSL)
	}
	s.Env = nil
	if got := compact(t, s.JSON()); strings.Contains(got, "env") {
		t.Errorf("no environment, yet env: %s", got)
	}
}

func TestURL(t *testing.T) {
	u := URL{Name: "combat", URL: "http://127.0.0.1:9000/mcp", Token: "tok'en", Env: map[string]string{"PATH": "/usr/bin"}}
	want := `{"mcpServers":{"combat":{"url":"http://127.0.0.1:9000/mcp","headers":{"Authorization":"Bearer tok'en"},"env":{"PATH":"/usr/bin"}}}}`
	if got := compact(t, u.JSON()); got != want {
		t.Errorf("JSON = %s\nwant   %s", got, want)
	}
	if got, want := u.ClaudeCommand(), `claude mcp add --transport http combat http://127.0.0.1:9000/mcp --header 'Authorization: Bearer tok'\''en'`; got != want {
		t.Errorf("ClaudeCommand = %s\nwant            %s", got, want)
	}
	u.Token = ""
	if got := compact(t, u.JSON()); strings.Contains(got, "headers") {
		t.Errorf("no token, yet headers: %s", got)
	}
	if got := u.ClaudeCommand(); strings.Contains(got, "--header") {
		t.Errorf("no token, yet a header: %s", got)
	}
}

func TestIsWSLVersion(t *testing.T) {
	for v, want := range map[string]bool{
		"Linux version 5.15.153.1-microsoft-standard-WSL2 (root@941d701f84f1) (gcc (GCC) 11.2.0)":   true,
		"Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com) (gcc version 5.4.0 (GCC) )":  true,
		"Linux version 6.1.0-18-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14))": false,
	} {
		if got := isWSLVersion(v); got != want {
			t.Errorf("isWSLVersion(%q) = %v, want %v", v, got, want)
		}
	}
}
