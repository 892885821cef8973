package pool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// The instances of a morloc program (morloc.go, morlocinstance.go),
// against the fake pool (testdata/morloc/fakepool.py), whose napPID
// answers its pid after 0.3 s and pid at once.

// pids makes n calls of mid at once and returns the pids that answered,
// in the order the calls were made, and how long they took together.
func (fs *fakeMorlocSet) pids(t *testing.T, n, mid int) ([]int, time.Duration) {
	t.Helper()
	pids := make([]int, n)
	errs := make([]error, n)
	start := time.Now()
	var wg sync.WaitGroup
	for k := range n {
		wg.Go(func() {
			got, err := fs.call(mid)
			if err == nil {
				pids[k], err = strconv.Atoi(got)
			}
			errs[k] = err
		})
	}
	wg.Wait()
	took := time.Since(start)
	for k, err := range errs {
		if err != nil {
			t.Fatalf("call %d of %d at once: %v", k+1, n, err)
		}
	}
	return pids, took
}

func distinct(xs []int) []int {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return slices.Compact(xs)
}

// instanceFiles are an instance's temporary directory and shared-memory
// basename.
type instanceFiles struct{ tmpdir, basename string }

func (fs *fakeMorlocSet) files() []instanceFiles {
	m := fs.morloc()
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []instanceFiles
	for _, inst := range m.live {
		out = append(out, instanceFiles{inst.tmpdir, inst.basename})
	}
	return out
}

// waitRemoved waits up to d until none of dirs exists.
func waitRemoved(t *testing.T, dirs []string, d time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		var left []string
		for _, dir := range dirs {
			if _, err := os.Lstat(dir); err == nil {
				left = append(left, dir)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still there after %s: %v", d, left)
		}
	}
}

// Calls at once run in instances started on demand, each with a process,
// temporary directory and basename of its own, up to the limit (Workers);
// the calls beyond it wait for an instance to be released. One call at a
// time runs in an instance.
func TestMorlocInstancesOnDemand(t *testing.T) {
	fs := startFakeMorloc(t, Spec{Workers: 3}, Options{})
	if err := fs.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := fs.liveInstances(); n != 1 {
		t.Fatalf("%d instances before any call, want 1", n)
	}
	pids, took := fs.pids(t, 6, fakeNapPID)
	if d := distinct(pids); len(d) != 3 {
		t.Errorf("6 calls at once with a limit of 3 ran in processes %v, want 3 of them", d)
	}
	// Two rounds of 0.3 s, and starts of a fresh Python process.
	if took < 600*time.Millisecond || took > 5*time.Second {
		t.Errorf("6 calls of 0.3 s, 3 at a time, took %s", took)
	}
	files := fs.files()
	if len(files) != 3 {
		t.Fatalf("%d live instances, want 3", len(files))
	}
	for i, f := range files {
		for _, g := range files[:i] {
			if f.tmpdir == g.tmpdir || f.basename == g.basename {
				t.Errorf("two instances share %v", f)
			}
		}
	}
	// Warm now: all three run at once.
	_, took = fs.pids(t, 3, fakeNapPID)
	if took > 900*time.Millisecond {
		t.Errorf("3 calls of 0.3 s in 3 warm instances took %s", took)
	}
}

// Without a limit in its Spec, a program runs up to one instance per CPU.
func TestMorlocInstancesDefaultLimit(t *testing.T) {
	fs := startFakeMorloc(t, Spec{}, Options{})
	if limit := fs.morloc().limit; limit < 1 || limit != runtime.NumCPU() {
		t.Errorf("limit %d, want the number of CPUs, %d", limit, runtime.NumCPU())
	}
}

// An instance beyond the last one left stops once idle for InstanceIdle:
// its process ends and its files go; the last one keeps serving.
func TestMorlocIdleInstancesStop(t *testing.T) {
	fs := startFakeMorloc(t, Spec{Workers: 3}, Options{InstanceIdle: 400 * time.Millisecond})
	pids, _ := fs.pids(t, 3, fakeNapPID)
	files := fs.files()
	if len(files) < 2 { // 3, unless a call ended before another began
		t.Fatalf("%d live instances after 3 calls at once, want 3", len(files))
	}
	deadline := time.Now().Add(10 * time.Second)
	for fs.liveInstances() > 1 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := fs.liveInstances(); n != 1 {
		t.Fatalf("%d instances live after idling, want 1", n)
	}
	kept := fs.files()[0]
	var gone []string
	for _, f := range files {
		if f != kept {
			gone = append(gone, f.tmpdir)
		}
	}
	waitRemoved(t, gone, 5*time.Second)
	got, err := fs.call(fakePID)
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range distinct(pids) {
		if strconv.Itoa(pid) == got {
			continue
		}
		if !processGone(pid, 5*time.Second) {
			t.Errorf("process %d of an idle instance still runs", pid)
		}
	}
	if !slices.Contains(pids, atoi(t, got)) {
		t.Errorf("the kept instance answered from process %s, none of %v", got, pids)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A call that times out, or is cancelled, is answered at once; the
// instance still running it is retired (its process stops, its files go),
// and the next call runs in a fresh one.
func TestMorlocGiveUpRetiresInstance(t *testing.T) {
	for _, how := range []string{"timeout", "cancel"} {
		t.Run(how, func(t *testing.T) {
			fs := startFakeMorloc(t, Spec{Workers: 1}, Options{})
			before := atoi(t, mustFake(t, fs, fakePID))
			files := fs.files()
			ctx := context.Background()
			opts := CallOptions{}
			if how == "timeout" {
				opts.Timeout = 300 * time.Millisecond
			} else {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				time.AfterFunc(300*time.Millisecond, cancel)
			}
			start := time.Now()
			_, err := fs.CallWith(ctx, 0, fakeSleep, nil, opts)
			took := time.Since(start)
			var te *TimeoutError
			if how == "timeout" && !errors.As(err, &te) || how == "cancel" && !errors.Is(err, context.Canceled) {
				t.Fatalf("sleep: %v", err)
			}
			if took > 250*time.Millisecond+300*time.Millisecond {
				t.Errorf("given up on after 300ms, answered after %s", took)
			}
			after := atoi(t, mustFake(t, fs, fakePID))
			if after == before {
				t.Errorf("the process %d of the call given up on still serves", before)
			}
			if !processGone(before, 5*time.Second) {
				t.Errorf("the retired instance's process %d still runs", before)
			}
			waitRemoved(t, []string{files[0].tmpdir}, 5*time.Second)
			fs.logs.waitFor(t, `msg="retiring a morloc instance" instance=1`, time.Second)
		})
	}
}

func mustFake(t *testing.T, fs *fakeMorlocSet, mid int) string {
	t.Helper()
	got, err := fs.call(mid)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// A call waiting for an instance (all busy, at the limit) gives up when
// its time runs out, and the calls in the instances are not disturbed.
func TestMorlocWaitForInstanceTimesOut(t *testing.T) {
	fs := startFakeMorloc(t, Spec{Workers: 1}, Options{})
	mustFake(t, fs, fakePID)
	done := make(chan error, 1)
	go func() {
		_, err := fs.call(fakeNapPID)
		done <- err
	}()
	time.Sleep(100 * time.Millisecond) // the nap has the instance
	_, err := fs.CallWith(context.Background(), 0, fakePID, nil, CallOptions{Timeout: 50 * time.Millisecond})
	var te *TimeoutError
	if !errors.As(err, &te) || te.Starting != "" {
		t.Errorf("a call waiting for the one instance: %v, want a *TimeoutError", err)
	}
	if err := <-done; err != nil {
		t.Errorf("the call in the instance: %v", err)
	}
	if n := fs.liveInstances(); n != 1 {
		t.Errorf("%d instances, want the one", n)
	}
}

// Close stops every instance: no process is left, nor temporary
// directory. Abandon kills them and removes their files without waiting.
func TestMorlocCloseEveryInstance(t *testing.T) {
	for _, how := range []string{"Close", "Abandon"} {
		t.Run(how, func(t *testing.T) {
			fs := startFakeMorloc(t, Spec{Workers: 3}, Options{Reaper: true})
			pids, _ := fs.pids(t, 3, fakeNapPID)
			files := fs.files()
			if how == "Close" {
				fs.Close()
			} else {
				start := time.Now()
				fs.Abandon()
				if took := time.Since(start); took > 200*time.Millisecond {
					t.Errorf("Abandon took %s", took)
				}
			}
			var dirs []string
			for _, f := range files {
				dirs = append(dirs, f.tmpdir)
				if shm, _ := filepath.Glob(filepath.Join(shmDir, f.basename+"*")); len(shm) > 0 {
					t.Errorf("left behind: %v", shm)
				}
			}
			waitRemoved(t, dirs, 5*time.Second)
			for _, pid := range distinct(pids) {
				if !processGone(pid, 5*time.Second) {
					t.Errorf("process %d outlived %s", pid, how)
				}
			}
		})
	}
}

// A pool failing as morloc 0.69's allocator does once it is wedged (see
// allocatorWedged) while reading a call's arguments has its instance
// retired, and the call, which never ran, is answered by a fresh one.
func TestMorlocWedgedAllocatorRetried(t *testing.T) {
	fs := startFakeMorloc(t, Spec{}, Options{}, "FAKE_WEDGE="+filepath.Join(t.TempDir(), "wedged"))
	first := atoi(t, mustFake(t, fs, fakePID))
	got, err := fs.call(fakeWedged)
	if err != nil {
		t.Fatalf("a call failing on a wedged allocator: %v, want it answered by a fresh instance", err)
	}
	if atoi(t, got) == first {
		t.Errorf("answered by the process %d whose allocator was wedged", first)
	}
	if !processGone(first, 5*time.Second) {
		t.Errorf("the wedged instance's process %d still runs", first)
	}
	fs.logs.waitFor(t, `msg="retiring a morloc instance" instance=1 why="its shared memory's allocator is wedged`, time.Second)
}
