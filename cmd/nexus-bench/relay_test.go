package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary be the relay, as the driver's own binary is
// (startRelay runs os.Executable() with relayEnv set).
func TestMain(m *testing.M) {
	if mode := os.Getenv(relayEnv); mode != "" {
		runRelay(mode, os.Args[1:])
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func benchProgram(t *testing.T) *bench {
	t.Helper()
	b := &bench{cfg: config{program: "../../testdata/bench", callTimeout: time.Minute}, floors: newFloorSet()}
	if err := b.loadProgram(); err != nil {
		t.Fatal(err)
	}
	return b
}

// The relay starts the real Python bench pool as nexus does, waits for its
// ready message, and answers each tools/call with the pool's own sum; a
// wrong mid comes back as an error, never as an answer.
func TestPoolRelay(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not found")
	}
	b := benchProgram(t)
	if b.mids["add_py"] != 1 || b.mids["add_r"] != 11 {
		t.Fatalf("mids from the manifest: %v", b.mids)
	}
	p, err := b.startPoolRelay("py")
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop()
	for i, c := range [][2]int{{1, 2}, {-7, 1000}, {123456789, 987654321}, {0, 0}, {40, -2}} {
		id := 100 + i
		reply, err := p.call(id, "add_py", c[0], c[1])
		if err != nil {
			t.Fatalf("add_py(%d, %d): %v", c[0], c[1], err)
		}
		if !textIs(reply, strconv.Itoa(c[0]+c[1])) || !strings.Contains(string(reply), `"id":`+strconv.Itoa(id)+`,`) {
			t.Errorf("add_py(%d, %d): %s", c[0], c[1], reply)
		}
	}
	// What the driver measures: every answer checked.
	r, err := p.measure("add_py", 20, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if r.lat.n != 20 || r.lat.p50 <= 0 {
		t.Errorf("measure: %+v", r)
	}

	// add_r's mid sent to the Python pool: the pool's error, not a sum.
	wrong, err := b.startPoolRelayMid("py", b.mids["add_r"])
	if err != nil {
		t.Fatal(err)
	}
	defer wrong.stop()
	reply, err := wrong.call(1, "add_py", 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if textIs(reply, "3") || !strings.Contains(string(reply), "unknown mid 11") {
		t.Errorf("a wrong mid answered %s", reply)
	}
	if _, err := wrong.measure("add_py", 5, time.Minute); err == nil || !strings.Contains(err.Error(), "WRONG answer") {
		t.Errorf("measure with a wrong mid: %v", err)
	}
}
