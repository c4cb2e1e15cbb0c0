//go:build unix

package execop

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// pollers are the readers a POSIX build can use; the first is the platform's own.
func pollers() map[string]func([2]int) (poller, error) {
	return map[string]func([2]int) (poller, error){"platform": newPoller, "poll": newPollPoller}
}

// withPoller runs f with every poller in turn.
func withPoller(t *testing.T, f func(t *testing.T)) {
	for name, p := range pollers() {
		t.Run(name, func(t *testing.T) {
			saved := newPoller
			newPoller = p
			defer func() { newPoller = saved }()
			f(t)
		})
	}
}

// TestSequentialWritesArriveInWriteOrder is X20: stdout written before stderr is delivered first, every time.
// With one reader per stream the Go scheduler decided, and stderr came first in about one run in ten.
func TestSequentialWritesArriveInWriteOrder(t *testing.T) {
	withPoller(t, func(t *testing.T) {
		dir := t.TempDir()
		r := New(dir)
		reversed := 0
		for range 50 {
			events := newFakeEvents()
			if code := run(t, r, shell("echo a; echo b >&2", dir), nil, events).exitCode(t); code != 0 {
				t.Fatalf("exit code %d", code)
			}
			all := events.all()
			if len(all) != 2 || all[0].text != "a\n" || all[1].text != "b\n" {
				reversed++
				t.Logf("delivered %+v", all)
			}
		}
		if reversed > 0 {
			t.Fatalf("%d of 50 runs did not deliver stdout's a before stderr's b", reversed)
		}
	})
}

// TestPausedWritesArriveInWriteOrder: single writes to either stream separated by pauses are delivered in
// the order they were written, one chunk each.
func TestPausedWritesArriveInWriteOrder(t *testing.T) {
	withPoller(t, func(t *testing.T) {
		dir := t.TempDir()
		rng := rand.New(rand.NewPCG(1, 2))
		var script, want []string
		for i := range 20 {
			stream := []string{"stdout", "stderr"}[rng.IntN(2)]
			redirect := ""
			if stream == "stderr" {
				redirect = " >&2"
			}
			script = append(script, fmt.Sprintf("printf w%d%s; sleep 0.01", i, redirect))
			want = append(want, fmt.Sprintf("%s:w%d", stream, i))
		}
		events := newFakeEvents()
		run(t, New(dir), shell(strings.Join(script, "; "), dir), nil, events).exitCode(t)
		var got []string
		for _, e := range events.all() {
			got = append(got, e.stream+":"+e.text)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("delivered %v, want %v", got, want)
		}
	})
}

// TestStdioIsWhatNodeGives is X13: stdout and stderr are connected UNIX stream sockets in blocking mode (as
// libuv creates them), stdin is the null device.
func TestStdioIsWhatNodeGives(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/self/fd is Linux's")
	}
	dir := t.TempDir()
	events := newFakeEvents()
	command := `for fd in 0 1 2; do readlink /proc/self/fd/$fd; grep flags /proc/self/fdinfo/$fd; done >&2`
	run(t, New(dir), shell(command, dir), nil, events).exitCode(t)
	lines := strings.Split(strings.TrimSpace(events.text("stderr")), "\n")
	if len(lines) != 6 {
		t.Fatalf("probe printed %q", lines)
	}
	if lines[0] != "/dev/null" {
		t.Errorf("stdin is %q, want /dev/null", lines[0])
	}
	for _, i := range []int{2, 4} {
		if !strings.HasPrefix(lines[i], "socket:[") {
			t.Errorf("fd %d is %q, want a socket", i/2, lines[i])
		}
		// fdinfo flags are octal; O_NONBLOCK is 04000. The child's end is blocking, read-write (02).
		if flags := strings.Fields(lines[i+1]); len(flags) != 2 || flags[1] != "02" {
			t.Errorf("fd %d has %q, want flags 02 (O_RDWR, blocking)", i/2, lines[i+1])
		}
	}
}
