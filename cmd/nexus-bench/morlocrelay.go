package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/morlocwire"
)

// relayMorloc is relayEnv's value that makes the driver a relay to a pool
// morloc compiled (runMorlocRelay), its arguments the launcher and the
// command.
const relayMorloc = "morloc"

// runMorlocRelay is the least a Go process can do per tools/call of a
// command that a morloc pool runs: the floor of nexus's own CPU and
// latency per such call. It starts the command's pool as nexus does (the
// manifest's exec, then its socket, a private temporary directory and a
// shared-memory basename; the program's directory as working directory),
// waits for it to answer a ping, then for each request line: find its id
// and the arguments _1 and _2, connect to the pool's socket (one
// connection per call, as morloc's pools take them), send the call packet
// (internal/morlocwire, as nexus builds it), read the reply packet, turn
// its value into JSON, write a reply line. On stdin's end it stops the
// pool and removes what the pool left.
func runMorlocRelay(argv []string) {
	if err := morlocRelay(argv, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		os.Exit(1)
	}
}

func morlocRelay(argv []string, stdin io.Reader, stdout io.Writer) error {
	if len(argv) != 2 {
		return fmt.Errorf("want LAUNCHER COMMAND, got %q", argv)
	}
	m, err := manifest.Load(argv[0])
	if err != nil {
		return err
	}
	i := slices.IndexFunc(m.Commands, func(c manifest.Command) bool { return c.Name == argv[1] })
	if i < 0 {
		return fmt.Errorf("%s has no command %s", argv[0], argv[1])
	}
	c := m.Commands[i]
	if c.Type != manifest.Remote || c.Pool < 0 || c.Pool >= len(m.Pools) || len(c.Args) != 2 {
		return fmt.Errorf("%s is not a command of two arguments run by a pool", c.Name)
	}
	dialect, err := morlocwire.DialectOf(m.WireVersion())
	if err != nil {
		return err
	}
	var types [2]*manifest.Type
	for k, a := range c.Args {
		if types[k], err = manifest.ParseType(a.Schema); err != nil {
			return fmt.Errorf("%s argument %d: %w", c.Name, k+1, err)
		}
	}
	ret, err := manifest.ParseType(c.Return.Schema)
	if err != nil {
		return fmt.Errorf("%s's result: %w", c.Name, err)
	}
	pool, err := startMorlocPool(m, m.Pools[c.Pool])
	if err != nil {
		return err
	}
	defer pool.stop()
	mem := morlocwire.OpenMemory(pool.basename, pool.tmpdir, dialect)
	defer mem.Close()

	in := bufio.NewReader(stdin)
	var args, packet, out []byte
	for {
		line, err := in.ReadSlice('\n')
		if err != nil {
			return nil
		}
		id := field(line, `"id":`)
		args = args[:0]
		for k, key := range []string{`"_1":`, `"_2":`} {
			if args, err = morlocwire.AppendArg(args, types[k], field(line, key), dialect); err != nil {
				return fmt.Errorf("argument %d: %w", k+1, err)
			}
		}
		packet = morlocwire.AppendCall(packet[:0], uint32(c.Mid), args)
		conn, err := net.Dial("unix", pool.socket)
		if err != nil {
			return err
		}
		_, err = conn.Write(packet)
		var reply *morlocwire.Packet
		if err == nil {
			reply, err = morlocwire.ReadPacket(conn, 1<<30)
		}
		conn.Close()
		if err != nil {
			return fmt.Errorf("calling %s: %w", c.Name, err)
		}
		if v, err := reply.Result(ret, dialect, mem); err != nil {
			out = appendRelayReply(out[:0], id, nil, true, err.Error())
		} else {
			out = appendRelayReply(out[:0], id, v, false, "")
		}
		if _, err := stdout.Write(out); err != nil {
			return err
		}
	}
}

// morlocRelayRun measures n calls of tool (a command of two Ints) through
// the relay to the pool that runs it, as the warm small calls measure
// nexus.
func (b *bench) morlocRelayRun(m *morlocBench, tool string, n int) (relayRun, error) {
	p, err := startRelay(relayMorloc, []string{m.launcher, tool}, append(os.Environ(), m.env...), "")
	if err != nil {
		return relayRun{}, err
	}
	defer p.stop()
	p.names = [2]string{"_1", "_2"}
	return p.measure(tool, n, b.cfg.callTimeout)
}

// morlocPool is one pool process of a morloc program, started as nexus
// starts it, with its temporary directory and shared-memory basename.
type morlocPool struct {
	cmd                      *exec.Cmd
	socket, tmpdir, basename string
}

// startMorlocPool starts the pool and waits until it answers a ping on
// its socket.
func startMorlocPool(m *manifest.Manifest, p manifest.Pool) (*morlocPool, error) {
	if len(p.Exec) == 0 || p.Socket == "" {
		return nil, fmt.Errorf("the %s pool has no exec or socket", p.Lang)
	}
	tmpdir, err := os.MkdirTemp("", "morloc.")
	if err != nil {
		return nil, err
	}
	mp := &morlocPool{tmpdir: tmpdir, basename: "morloc-" + strconv.Itoa(os.Getpid()) + "-relay", socket: filepath.Join(tmpdir, p.Socket)}
	argv := append(slices.Clone(p.Exec), mp.socket, mp.tmpdir, mp.basename)
	if strings.ContainsRune(argv[0], '/') && !filepath.IsAbs(argv[0]) {
		argv[0] = filepath.Join(m.Dir, argv[0])
	}
	mp.cmd = exec.Command(argv[0], argv[1:]...)
	mp.cmd.Dir = m.Dir
	mp.cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, relayEnv+"=") })
	mp.cmd.Stdout, mp.cmd.Stderr = os.Stderr, os.Stderr // fd 1 is the relay's MCP channel
	mp.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := mp.cmd.Start(); err != nil {
		os.RemoveAll(tmpdir)
		return nil, err
	}
	ping := morlocwire.Ping()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		err := pingOnce(mp.socket, ping)
		if err == nil {
			return mp, nil
		}
		if time.Now().After(deadline) {
			mp.stop()
			return nil, fmt.Errorf("the %s pool did not answer a ping within a minute: %w", p.Lang, err)
		}
	}
}

func pingOnce(socket string, ping []byte) error {
	conn, err := net.Dial("unix", socket)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Write(ping); err != nil {
		return err
	}
	pong := make([]byte, len(ping))
	if _, err := io.ReadFull(conn, pong); err != nil {
		return err
	}
	if string(pong) != string(ping) {
		return errors.New("the pool answered the ping with something else")
	}
	return nil
}

// stop ends the pool's process group (its forked workers too) as nexus
// does, SIGTERM then SIGKILL, and removes its temporary directory and
// shared-memory volumes.
func (mp *morlocPool) stop() {
	pgid := mp.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	waitOrKill(mp.cmd, 5*time.Second)
	syscall.Kill(-pgid, syscall.SIGKILL) // workers that outlived their parent
	os.RemoveAll(mp.tmpdir)
	files, _ := morlocwire.ShmFiles(mp.basename)
	for _, f := range files {
		os.Remove(f)
	}
}
