// Command capture plays morloc's nexus against the pools of a program the
// real morloc 0.69.0 compiled, and stores what they answer as golden
// fixtures (testdata/v0.69/README.md says how it was run). For each case of
// <lang>/cases.json it:
//
//   - encodes the arguments with morlocwire.AppendArg and sends the call
//     packet (saved as <case>.call) to the pool over its Unix socket;
//   - saves the pool's reply packet, byte for byte, as <case>.packet;
//   - when the reply is an RPTR into shared memory, copies every volume
//     /dev/shm/<basename>_<i> at once, gzipped, as <case>.shm/<i>.gz;
//   - runs morloc's own nexus (the launcher) on the same arguments and saves
//     its output, numbers and strings rewritten in nexus's canonical form,
//     as <case>.want.json (unless the case gives "want" itself).
//
// It lives under testdata so that `go build ./...` and `go vet ./...` skip
// it: it needs the morloc toolchain, which the tests do not.
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nexus-mcp/nexus/internal/jsontext"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/morlocwire"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

type v1Manifest struct {
	BuildDir string `json:"build_dir"`
	Pools    []struct {
		Lang   string   `json:"lang"`
		Exec   []string `json:"exec"`
		Socket string   `json:"socket"`
	} `json:"pools"`
	Commands []struct {
		Name         string   `json:"name"`
		Mid          uint32   `json:"mid"`
		Pool         int      `json:"pool"`
		ArgSchemas   []string `json:"arg_schemas"`
		ReturnSchema string   `json:"return_schema"`
	} `json:"commands"`
}

type testCase struct {
	Name string          `json:"name"`
	Cmd  string          `json:"cmd"`
	Args []string        `json:"args"` // each one JSON text
	Want json.RawMessage `json:"want,omitempty"`
	Fail string          `json:"fail,omitempty"`
	// SameAs names the language whose <case>.want.json holds this case's
	// result too (the same function in another language).
	SameAs string `json:"same_as,omitempty"`
}

func main() {
	prog := flag.String("prog", "", "directory of the compiled program (holding the launcher 'nexus')")
	dir := flag.String("dir", "", "fixture directory holding cases.json; outputs go beside it")
	flag.Parse()
	if *prog == "" || *dir == "" {
		log.Fatal("usage: capture -prog DIR -dir FIXTUREDIR")
	}
	launcher := filepath.Join(*prog, "nexus")
	text, err := os.ReadFile(launcher)
	if err != nil {
		log.Fatal(err)
	}
	_, js, ok := strings.Cut(string(text), "### MANIFEST ###\n")
	if !ok {
		log.Fatal("no ### MANIFEST ### in the launcher")
	}
	var m v1Manifest
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		log.Fatal(err)
	}
	// The manifest, for the tests (build_dir and build_time are this machine's).
	var pretty map[string]any
	must(json.Unmarshal([]byte(js), &pretty))
	pretty["build_dir"], pretty["build_time"] = "(the build directory)", 0
	mj, _ := json.MarshalIndent(pretty, "", " ")
	must(os.WriteFile(filepath.Join(*dir, "manifest.json"), append(mj, '\n'), 0o644))

	var cases []testCase
	raw, err := os.ReadFile(filepath.Join(*dir, "cases.json"))
	if err != nil {
		log.Fatal(err)
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		log.Fatal(err)
	}

	tmp, err := os.MkdirTemp("", "morloc.")
	if err != nil {
		log.Fatal(err)
	}
	basename := "morloc-wirefix-" + filepath.Base(*dir)
	p := m.Pools[0]
	sock := filepath.Join(tmp, p.Socket)
	argv := append(append([]string{}, p.Exec...), sock, tmp, basename)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = m.BuildDir
	logFile, err := os.Create(filepath.Join(tmp, "pool.log"))
	if err != nil {
		log.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	stop = func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		time.Sleep(300 * time.Millisecond)
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		files, _ := morlocwire.ShmFiles(basename)
		for _, f := range files {
			os.Remove(f)
		}
		if b, _ := os.ReadFile(logFile.Name()); len(b) > 0 {
			log.Printf("pool stderr:\n%s", b)
		}
		os.RemoveAll(tmp)
	}
	defer stop()
	if err := ping(sock); err != nil {
		fatalf("%v", err)
	}

	for _, c := range cases {
		var command *struct {
			Name         string   `json:"name"`
			Mid          uint32   `json:"mid"`
			Pool         int      `json:"pool"`
			ArgSchemas   []string `json:"arg_schemas"`
			ReturnSchema string   `json:"return_schema"`
		}
		for k := range m.Commands {
			if m.Commands[k].Name == c.Cmd {
				command = &m.Commands[k]
			}
		}
		if command == nil {
			fatalf("%s: no command %s", c.Name, c.Cmd)
		}
		var args []byte
		for k, a := range c.Args {
			t, err := manifest.ParseType(command.ArgSchemas[k])
			if err != nil {
				fatalf("%v", err)
			}
			if args, err = morlocwire.AppendArg(args, t, json.RawMessage(a), morlocwire.C); err != nil {
				fatalf("%s: argument %d: %v", c.Name, k, err)
			}
		}
		call := morlocwire.CallPacket(command.Mid, args)
		reply, err := roundTrip(sock, call)
		if err != nil {
			fatalf("%s: %v", c.Name, err)
		}
		base := filepath.Join(*dir, c.Name)
		must(os.WriteFile(base+".call", call, 0o644))
		must(os.WriteFile(base+".packet", reply, 0o644))
		pk, err := morlocwire.ParsePacket(reply)
		if err != nil {
			fatalf("%s: %v", c.Name, err)
		}
		os.RemoveAll(base + ".shm")
		if pk.Header.Source() == morlocwire.SourceRptr {
			must(copyVolumes(basename, tmp, base+".shm"))
		}
		if c.Want == nil && c.Fail == "" && c.SameAs == "" {
			want, err := morlocOwn(launcher, c.Cmd, c.Args)
			if err != nil {
				fatalf("%s: morloc's nexus: %v", c.Name, err)
			}
			must(os.WriteFile(base+".want.json", append(want, '\n'), 0o644))
		}
		log.Printf("%s: %d-byte reply (source %d, format %d, status %d)", c.Name, len(reply), pk.Header.Source(), pk.Header.Format(), pk.Header.Status())
	}
}

// stop ends the pool and removes what it left; fatalf calls it first.
var stop = func() {}

func fatalf(format string, a ...any) {
	stop()
	log.Fatalf(format, a...)
}

func must(err error) {
	if err != nil {
		fatalf("%v", err)
	}
}

// ping waits for the pool to echo a ping (v0.69 nexus.c:340-395).
func ping(sock string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		reply, err := roundTrip(sock, morlocwire.Ping())
		if err == nil && bytes.Equal(reply, morlocwire.Ping()) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("pool at %s never answered a ping", sock)
}

// roundTrip sends one packet on a new connection and reads one back.
func roundTrip(sock string, packet []byte) ([]byte, error) {
	conn, err := net.DialTimeout("unix", sock, time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := conn.Write(packet); err != nil {
		return nil, err
	}
	pk, err := morlocwire.ReadPacket(bufio.NewReader(conn), 1<<30)
	if err != nil {
		return nil, err
	}
	var out []byte
	out = append(out, packet[:0]...)
	hdr := make([]byte, 0, morlocwire.HeaderSize)
	hdr = appendHeader(hdr, pk.Header)
	out = append(append(append(out, hdr...), pk.Meta...), pk.Payload...)
	return out, nil
}

func appendHeader(dst []byte, h morlocwire.Header) []byte {
	var b [32]byte
	putLE(b[0:4], uint64(h.Magic))
	putLE(b[4:6], uint64(h.Plain))
	putLE(b[6:8], uint64(h.Version))
	putLE(b[8:10], uint64(h.Flavor))
	putLE(b[10:12], uint64(h.Mode))
	copy(b[12:20], h.Command[:])
	putLE(b[20:24], uint64(h.Offset))
	putLE(b[24:32], h.Length)
	return append(dst, b[:]...)
}

func putLE(b []byte, v uint64) {
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
}

// copyVolumes gzips every volume of basename (in /dev/shm, or the tmpdir
// fallback) into dir as <i>.gz.
func copyVolumes(basename, fallback, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := 0; ; i++ {
		name := morlocwire.VolumeName(basename, i)
		data, err := os.ReadFile(filepath.Join(morlocwire.ShmDir, name))
		if os.IsNotExist(err) {
			data, err = os.ReadFile(filepath.Join(fallback, name))
		}
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(data)
		zw.Close()
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+".gz"), buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
}

// morlocOwn runs morloc's own nexus on the arguments and returns its
// output in nexus's canonical JSON.
func morlocOwn(launcher, cmdName string, args []string) ([]byte, error) {
	argv := append([]string{cmdName, "--"}, args...) // "--": a negative number is not an option
	cmd := exec.Command(launcher, argv...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%v: %s", err, stderr.String())
	}
	return canonical(bytes.TrimSpace(out))
}

// canonical rewrites JSON in nexus's forms, keeping the order of object
// members: a number with a fraction or exponent as the shortest text of its
// double (ndarray.AppendReal), an integer as it is, a string escaped as
// jsontext.AppendString does.
func canonical(in []byte) ([]byte, error) {
	if len(in) == 0 { // Unit: morloc prints nothing
		return []byte("null"), nil
	}
	dec := json.NewDecoder(bytes.NewReader(in))
	dec.UseNumber()
	out, err := canon(dec, nil)
	if err != nil {
		return nil, fmt.Errorf("%v in %.200s", err, in)
	}
	return out, nil
}

func canon(dec *json.Decoder, out []byte) ([]byte, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch x := tok.(type) {
	case json.Delim:
		open, close := byte(x), byte(']')
		if x == '{' {
			close = '}'
		}
		out = append(out, open)
		for k := 0; dec.More(); k++ {
			if k > 0 {
				out = append(out, ',')
			}
			if x == '{' {
				key, err := dec.Token()
				if err != nil {
					return nil, err
				}
				out = append(jsontext.AppendString(out, []byte(key.(string))), ':')
			}
			if out, err = canon(dec, out); err != nil {
				return nil, err
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return append(out, close), nil
	case string:
		return jsontext.AppendString(out, []byte(x)), nil
	case json.Number:
		if jsontext.IsIntLiteral([]byte(x)) {
			return append(out, x...), nil
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, fmt.Errorf("number %s", x)
		}
		return ndarray.AppendReal(out, f), nil
	case bool:
		return strconv.AppendBool(out, x), nil
	}
	return append(out, "null"...), nil
}
