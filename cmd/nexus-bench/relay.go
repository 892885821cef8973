package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"time"
)

// relayEnv makes the driver a relay (runRelay): the floor of nexus's own
// CPU per call.
const relayEnv = "NEXUS_BENCH_RELAY"

// runRelay is the least a Go process can do per tools/call: one goroutine,
// blocking pipes; read a request line, find its id and two numbers, send
// one call frame to the child (argv, a floor child speaking the pool
// framing), read its reply frame, write a reply line. nexus does this and
// everything MCP asks besides (validation, concurrency, cancellation,
// progress, timeouts), so its CPU per call is measured against this.
func runRelay(argv []string) {
	cmd := exec.Command(argv[0], argv[1:]...)
	toR, toW, _ := os.Pipe()
	fromR, fromW, _ := os.Pipe()
	cmd.ExtraFiles = []*os.File{toR, fromW}
	cmd.Env = append(os.Environ(), "NEXUS_POOL_IN=3", "NEXUS_POOL_OUT=4")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		os.Exit(1)
	}
	toR.Close()
	fromW.Close()
	from := bufio.NewReader(fromR)
	in := bufio.NewReader(os.Stdin)
	frame := make([]byte, 4, 256)
	var out []byte
	var head [4]byte
	for {
		line, err := in.ReadSlice('\n')
		if err != nil {
			toW.Close()
			cmd.Wait()
			return
		}
		id := field(line, `"id":`)
		frame = append(frame[:4], `{"type":"call","id":1,"mid":1,"args":[`...)
		frame = append(frame, field(line, `"a":`)...)
		frame = append(frame, ',')
		frame = append(frame, field(line, `"b":`)...)
		frame = append(frame, "]}"...)
		binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
		if _, err := toW.Write(frame); err != nil {
			os.Exit(1)
		}
		if _, err := io.ReadFull(from, head[:]); err != nil {
			os.Exit(1)
		}
		reply := make([]byte, binary.BigEndian.Uint32(head[:]))
		if _, err := io.ReadFull(from, reply); err != nil {
			os.Exit(1)
		}
		value := bytes.TrimSuffix(field(reply, `"value":`), []byte("}"))
		out = append(out[:0], `{"jsonrpc":"2.0","id":`...)
		out = append(out, id...)
		out = append(out, `,"result":{"content":[{"type":"text","text":"`...)
		out = append(out, value...)
		out = append(out, "\"}],\"isError\":false}}\n"...)
		os.Stdout.Write(out)
	}
}

// field returns the text after key up to the next ',' or '}'.
func field(b []byte, key string) []byte {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return nil
	}
	v := b[i+len(key):]
	if j := bytes.IndexAny(v, ",}"); j >= 0 {
		v = v[:j]
	}
	return v
}

// relayFloor measures runRelay's CPU per call and its latency, n calls to
// the C++ floor child, driven as the small-call phase drives nexus.
func (b *bench) relayFloor(dir string, n int) (float64, latency, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, latency{}, err
	}
	cmd := exec.Command(self, floorArgv(dir, "cpp")...)
	cmd.Env = append(os.Environ(), relayEnv+"=1")
	w, err := cmd.StdinPipe()
	if err != nil {
		return 0, latency{}, err
	}
	r, err := cmd.StdoutPipe()
	if err != nil {
		return 0, latency{}, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return 0, latency{}, err
	}
	defer func() {
		w.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	}()
	replies := bufio.NewReader(r)
	var line []byte
	one := func(i int) error {
		line = callLine(line[:0], i+1, "add_cpp", `{"a":`+strconv.Itoa(i)+`,"b":1000}`)
		if _, err := w.Write(line); err != nil {
			return err
		}
		reply, err := replies.ReadSlice('\n')
		if err != nil {
			return err
		}
		if !textIs(reply, strconv.Itoa(i+1000)) {
			return fmt.Errorf("the relay answered %.200s", reply)
		}
		return nil
	}
	for i := range warmup(n) {
		if err := one(i); err != nil {
			return 0, latency{}, err
		}
	}
	lat := make([]time.Duration, n)
	c0 := cpuTicks(cmd.Process.Pid)
	for i := range n {
		t := time.Now()
		if err := one(i); err != nil {
			return 0, latency{}, err
		}
		lat[i] = time.Since(t)
	}
	return ticksToMicros(cpuTicks(cmd.Process.Pid)-c0) / float64(n), latencies(lat), nil
}
