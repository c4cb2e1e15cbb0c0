//go:build unix

package execop

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
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
// readiness order. Each delivery starts with the oldest write not delivered yet and holds consecutive writes of
// its stream; with no stall of the reader longer than a pause that is exactly the write order, and under a stall
// (a loaded machine) later writes of a stream may join its earlier ones, as under Node. poll(2) cannot tell which
// of two ready streams came first, so for it only each stream's order is checked.
func TestPausedWritesArriveInWriteOrder(t *testing.T) {
	withPoller(t, func(t *testing.T) {
		dir := t.TempDir()
		rng := rand.New(rand.NewPCG(1, 2))
		var script []string
		var writes []write
		for i := range 20 {
			stream := []string{"stdout", "stderr"}[rng.IntN(2)]
			redirect := ""
			if stream == "stderr" {
				redirect = " >&2"
			}
			script = append(script, fmt.Sprintf("printf w%d.%s; sleep 0.01", i, redirect))
			writes = append(writes, write{stream, fmt.Sprintf("w%d.", i)})
		}
		events := newFakeEvents()
		run(t, New(dir), shell(strings.Join(script, "; "), dir), nil, events).exitCode(t)
		checkReadinessOrder(t, writes, events.all(), t.Name() == "TestPausedWritesArriveInWriteOrder/platform")
	})
}

// write is one write of a command: its stream and text.
type write struct{ stream, text string }

// checkReadinessOrder checks deliveries against the writes that produced them: every write is delivered once,
// each delivery is consecutive writes of its stream, and (when ordered) starts with the oldest undelivered write
// (or is stdout's first delivery: what both streams hold when reading starts is read stdout first).
func checkReadinessOrder(t *testing.T, writes []write, delivered []event, ordered bool) {
	t.Helper()
	done := make([]bool, len(writes))
	next := map[string]int{"stdout": 0, "stderr": 0} // index into writes of the stream's next undelivered write
	advance := func(stream string, from int) int {
		for from < len(writes) && (done[from] || writes[from].stream != stream) {
			from++
		}
		return from
	}
	next["stdout"], next["stderr"] = advance("stdout", 0), advance("stderr", 0)
	for _, e := range delivered {
		rest := e.text
		first := next[e.stream]
		if ordered {
			oldest := 0
			for oldest < len(writes) && done[oldest] {
				oldest++
			}
			// What both streams hold when reading starts is read stdout first, as under Node.
			atStart := e.stream == "stdout" && !slices.Contains(done, true)
			if first != oldest && !atStart {
				t.Fatalf("delivery %s:%q starts with write %d, but write %d is older and undelivered (all: %+v)",
					e.stream, e.text, first, oldest, delivered)
			}
		}
		for rest != "" {
			i := next[e.stream]
			if i >= len(writes) || !strings.HasPrefix(rest, writes[i].text) {
				t.Fatalf("delivery %s:%q is not the stream's next writes (all: %+v)", e.stream, e.text, delivered)
			}
			rest = rest[len(writes[i].text):]
			done[i] = true
			next[e.stream] = advance(e.stream, i+1)
		}
	}
	for i, d := range done {
		if !d {
			t.Fatalf("write %d (%+v) was not delivered (all: %+v)", i, writes[i], delivered)
		}
	}
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

// openDescriptors counts the agent's open file descriptors.
func openDescriptors(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// settledDescriptors waits up to limit for the descriptor count to fall to at most want (a command's last
// descriptors are closed just after its result is delivered) and returns the last count seen.
func settledDescriptors(t *testing.T, want int, limit time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		n := openDescriptors(t)
		if n <= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Commands leave no descriptor open in the agent: the child's ends of its stdio are closed once it started, and
// the parent's ends once it ended (killed mutant: closeAll closing nothing, so every command left its two
// socket ends behind and ended only through the post-exit grace).
func TestCommandsLeaveNoDescriptorOpen(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/self/fd is Linux's")
	}
	dir := t.TempDir()
	r := New(dir)
	run(t, r, shell("true", dir), nil, newFakeEvents()).exitCode(t) // the runner's own lazily made resources
	before := settledDescriptors(t, 0, 200*time.Millisecond)
	for range 10 {
		run(t, r, shell("echo out; echo err >&2", dir), nil, newFakeEvents()).exitCode(t)
		run(t, r, argv(dir, "/nonexistent/program"), nil, newFakeEvents())
	}
	if after := settledDescriptors(t, before, time.Second); after > before {
		t.Fatalf("%d descriptors open after 20 commands; %d before", after, before)
	}
}
