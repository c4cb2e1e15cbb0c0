package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/agent-go/internal/frame"
)

// end closes the client's ends of the agent's stdio, as a client that is done does, waits for the agent to
// exit (killing it after a while) and returns its peak resident set in bytes. The peak is the agent's VmHWM,
// sampled until it exits (ru_maxrss would not do: it counts the test process's own memory, which the child
// shares between fork and exec).
func (a *agent) end() int64 {
	a.t.Helper()
	server := a.serverPid()
	peak := peakRSS(server)
	_ = a.in.Close()
	_ = a.out.Close()
	kill := time.After(10 * time.Second)
	for {
		select {
		case <-a.exited:
			return peak
		case <-kill:
			_ = a.cmd.Process.Kill()
		case <-time.After(10 * time.Millisecond):
			peak = max(peak, peakRSS(server))
		}
	}
}

// serverPid is the pid of the process that serves: the guardian's child, or the agent itself when it runs
// without a guardian.
func (a *agent) serverPid() int {
	lists, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", a.pid()))
	for _, list := range lists {
		raw, _ := os.ReadFile(list)
		if fields := strings.Fields(string(raw)); len(fields) > 0 {
			if pid, err := strconv.Atoi(fields[0]); err == nil {
				return pid
			}
		}
	}
	return a.pid()
}

// peakRSS is a process's VmHWM in bytes, or 0 once it is gone.
func peakRSS(pid int) int64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// memoryCeiling is the peak RSS the agent must stay under whatever a client floods it with.
const memoryCeiling = 256 << 20

// Under each flood of the issue that showed unbounded memory, the agent's peak RSS stays under the ceiling:
// huge reads of a tiny file, execs carrying maximum-size JSON, and maximum-size writes to a FIFO nobody reads.
func TestFloodsStayUnderTheMemoryCeiling(t *testing.T) {
	if testing.Short() {
		t.Skip("floods the real agent with gigabytes; skipped in -short mode")
	}
	dir := t.TempDir()
	big := frame.MaxFrame - frame.HeaderSize
	floods := []struct {
		name string
		// frames builds the flood; setup requests may be sent first.
		frames func(a *agent) []frame.Frame
		// settle, when set, waits for the agent to have handled a completely read flood.
		settle func(a *agent)
	}{
		{"300 preads of 2^53-1 bytes from a 6-byte file", func(a *agent) []frame.Frame {
			small := filepath.Join(dir, "small")
			if err := os.WriteFile(small, []byte("hello!"), 0o644); err != nil {
				t.Fatal(err)
			}
			a.request(1, fmt.Sprintf(`{"op":"open","path":%q}`, small), nil)
			handle := a.reply(1)["handle"]
			var frames []frame.Frame
			for id := uint32(2); id < 302; id++ {
				frames = append(frames, frame.Frame{Type: frame.Request, ID: id,
					JSON: []byte(fmt.Sprintf(`{"op":"pread","handle":%v,"offset":0,"length":9007199254740991}`, handle))})
			}
			return frames
		}, func(a *agent) {
			a.replies(300)
		}},
		{"48 running execs carrying 16 MiB of JSON each", func(a *agent) []frame.Frame {
			var frames []frame.Frame
			for id := uint32(1); id <= 48; id++ {
				head := fmt.Sprintf(`{"op":"exec","command":"sleep 100","cwd":%q,"env":{},"pad":"`, dir)
				pad := strings.Repeat("x", big-len(head)-2)
				frames = append(frames, frame.Frame{Type: frame.Request, ID: id, JSON: []byte(head + pad + `"}`)})
			}
			return frames
		}, nil},
		{"80 writes of 16 MiB to a FIFO nobody reads", func(a *agent) []frame.Frame {
			fifo := filepath.Join(dir, "fifo")
			if err := syscall.Mkfifo(fifo, 0o644); err != nil && !errors.Is(err, os.ErrExist) {
				t.Fatal(err)
			}
			head := []byte(fmt.Sprintf(`{"op":"write","path":%q,"append":true}`, fifo))
			payload := bytes.Repeat([]byte{'w'}, big-len(head))
			var frames []frame.Frame
			for id := uint32(1); id <= 80; id++ {
				frames = append(frames, frame.Frame{Type: frame.Request, ID: id, JSON: head, Payload: payload})
			}
			return frames
		}, nil},
	}
	for _, flood := range floods {
		t.Run(flood.name, func(t *testing.T) {
			a := startAgent(t)
			completed := a.flood(flood.frames(a))
			if completed && flood.settle != nil {
				stop := a.pingWhile()
				flood.settle(a)
				stop()
			}
			peak := a.end()
			t.Logf("peak RSS %.1f MiB (flood %s)", float64(peak)/(1<<20),
				map[bool]string{true: "read completely", false: "held back by the agent"}[completed])
			if peak > memoryCeiling {
				t.Fatalf("peak RSS %d MiB exceeds the ceiling of %d MiB", peak>>20, memoryCeiling>>20)
			}
		})
	}
}

// processesRunning lists the pids whose command line is exactly argv.
func processesRunning(t *testing.T, argv ...string) []int {
	t.Helper()
	want := strings.Join(argv, "\x00") + "\x00"
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && string(cmdline) == want {
			if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && isZombie(stat) {
				continue
			}
			pids = append(pids, pid)
		}
	}
	return pids
}

// isZombie reads the state field of /proc/<pid>/stat (after the parenthesized command name).
func isZombie(stat []byte) bool {
	end := bytes.LastIndexByte(stat, ')')
	return end >= 0 && end+2 < len(stat) && stat[end+2] == 'Z'
}

// uniqueSleep is a sleep command line no other process has: a duration with this test run's own digits.
func uniqueSleep(seconds int) []string {
	return []string{"sleep", fmt.Sprintf("%d.%09d", seconds, time.Now().UnixNano()%1e9)}
}

func execArgv(dir string, argv []string) string {
	raw, _ := json.Marshal(map[string]any{"op": "exec", "argv": argv, "cwd": dir, "env": map[string]any{}})
	return string(raw)
}

// killAll kills leftover processes so a failing test does not leave them behind.
func killAll(pids []int) {
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// A command the agent kills because its input ended is never answered: the client sees the connection lost,
// not an exit status 137 that reads as a successful kill. Every command is known to run (it printed) before
// the input ends.
func TestCommandsKilledAtShutdownGetNoResult(t *testing.T) {
	dir := t.TempDir()
	a := startAgent(t)
	sleep := uniqueSleep(100)
	t.Cleanup(func() { killAll(processesRunning(t, sleep...)) })
	// Open handles make the agent's shutdown take a little longer (it closes them), as a real session's do.
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	const handles = 4000
	for id := uint32(10000); id < 10000+handles; id++ {
		a.request(id, fmt.Sprintf(`{"op":"open","path":%q}`, file), nil)
	}
	a.replies(handles)
	const commands = 320
	script := "echo up; exec " + strings.Join(sleep, " ")
	for id := uint32(1); id <= commands; id++ {
		a.request(id, execArgv(dir, []string{"sh", "-c", script}), nil)
	}
	for up := 0; up < commands; {
		f, err := a.next()
		if err != nil {
			t.Fatalf("%d commands started before the output ended: %v", up, err)
		}
		switch f.Type {
		case frame.Event:
			up++
		case frame.Result, frame.Error:
			t.Fatalf("request %d ended early: %s", f.ID, f.JSON)
		}
	}
	_ = a.in.Close()
	answered := 0
	for {
		f, err := a.next()
		if err != nil {
			break
		}
		if f.Type == frame.Result || f.Type == frame.Error {
			answered++
		}
	}
	if answered != 0 {
		t.Fatalf("%d of %d commands killed at shutdown were answered", answered, commands)
	}
}

// orphanRounds is how many agents TestNoCommandOutlivesItsAgent starts; before the fix a few rounds in a
// hundred left their command running.
const orphanRounds = 300

// An exec that arrives just before the input ends never outlives the agent: each round sends one and closes
// the input at once, and once every agent has exited not one of their commands is still running.
func TestNoCommandOutlivesItsAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts many agents; skipped in -short mode")
	}
	dir := t.TempDir()
	sleep := uniqueSleep(9)
	t.Cleanup(func() { killAll(processesRunning(t, sleep...)) })
	for range orphanRounds {
		a := startAgent(t)
		a.request(1, execArgv(dir, sleep), nil)
		a.end()
	}
	if left := processesRunning(t, sleep...); len(left) > 0 {
		t.Fatalf("%d of %d commands outlived their agent", len(left), orphanRounds)
	}
}

// A client that closed the agent's output but keeps its input open (and pinging) is gone: the first reply
// the agent cannot write ends the connection, and the running command dies with it.
func TestClosedOutputEndsTheAgent(t *testing.T) {
	dir := t.TempDir()
	a := startAgent(t)
	sleep := uniqueSleep(100)
	t.Cleanup(func() { killAll(processesRunning(t, sleep...)) })
	a.request(1, execArgv(dir, []string{"sh", "-c", "echo up; exec " + strings.Join(sleep, " ")}), nil)
	if f, err := a.next(); err != nil || f.Type != frame.Event {
		t.Fatalf("the command did not start: %v %v", f, err)
	}
	_ = a.out.Close()
	a.request(2, `{"op":"hello"}`, nil)
	stop := a.pingWhile()
	defer stop()
	select {
	case <-a.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the agent kept running with its output closed")
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(processesRunning(t, sleep...)) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the command outlived the agent")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitProcesses waits until exactly n processes run argv (bounded) and returns them.
func waitProcesses(t *testing.T, n int, argv ...string) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := processesRunning(t, argv...)
		if len(pids) == n {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d processes run %q, want %d", len(pids), argv, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// escapingTrees are commands whose descendants outlive the command's shell in ways a process-group kill
// misses (or, for the first, does not): each prints "up" once its marker processes run. %s is the marker
// command; n is how many marker processes each starts.
var escapingTrees = []struct {
	name, script string
	n            int
}{
	{"background jobs of a waiting shell", "%[1]s & %[1]s & echo up; wait", 2},
	{"a setsid descendant", "setsid %[1]s & echo up; wait", 1},
	{"a double fork", "(setsid sh -c '%[1]s & exit' &); echo up; exec %[1]s", 2},
}

// No command survives the agent, however the agent ends and whatever the command's tree did to escape:
// SIGKILL of the process the client started (the guardian), SIGKILL of the server behind it, or the end
// of the input.
func TestNoDescendantSurvivesTheAgent(t *testing.T) {
	dir := t.TempDir()
	endings := []struct {
		name string
		end  func(a *agent)
	}{
		{"agent SIGKILLed", func(a *agent) { _ = a.cmd.Process.Kill() }},
		{"server SIGKILLed", func(a *agent) { _ = syscall.Kill(a.serverPid(), syscall.SIGKILL) }},
		{"input closed", func(a *agent) { _ = a.in.Close() }},
	}
	for _, ending := range endings {
		for _, tree := range escapingTrees {
			t.Run(ending.name+"/"+tree.name, func(t *testing.T) {
				a, sleep := startEscapingTree(t, dir, tree.script, tree.n)
				ending.end(a)
				waitProcesses(t, 0, sleep...)
			})
		}
	}
}

// startEscapingTree starts an agent running script (an escapingTrees entry, with its sleeps marked by a unique
// duration) as request 1 and waits until its n marked sleeps run; they are killed at the test's end if they
// survived it.
func startEscapingTree(t *testing.T, dir, script string, n int) (*agent, []string) {
	t.Helper()
	sleep := uniqueSleep(100)
	t.Cleanup(func() { killAll(processesRunning(t, sleep...)) })
	a := startAgent(t)
	a.request(1, execArgv(dir, []string{"sh", "-c", fmt.Sprintf(script, strings.Join(sleep, " "))}), nil)
	if f, err := a.next(); err != nil || f.Type != frame.Event {
		t.Fatalf("the command did not start: %v %v", f, err)
	}
	waitProcesses(t, n, sleep...)
	return a, sleep
}

// A command killed by its timeout (or an abort, or cleanup()) takes with it the descendants that left its
// process group: they were re-parented to the agent, which kills them when the command settles.
func TestKilledCommandTakesItsEscapedDescendants(t *testing.T) {
	dir := t.TempDir()
	for _, tree := range escapingTrees {
		t.Run(tree.name, func(t *testing.T) {
			a, sleep := startEscapingTree(t, dir, tree.script, tree.n)
			if err := a.send(frame.Frame{Type: frame.Cancel, ID: 1, JSON: []byte(`{"mode":"kill"}`)}); err != nil {
				t.Fatal(err)
			}
			for {
				f, err := a.next()
				if err != nil {
					t.Fatalf("no reply to the killed command: %v", err)
				}
				if f.ID == 1 && (f.Type == frame.Result || f.Type == frame.Error) {
					break
				}
			}
			waitProcesses(t, 0, sleep...)
		})
	}
}

// A command that ends by itself leaves its background jobs running, as Node does (only a kill takes them):
// the agent adopting them changes nothing until the connection ends.
func TestFinishedCommandKeepsItsBackgroundJobs(t *testing.T) {
	dir := t.TempDir()
	sleep := uniqueSleep(100)
	t.Cleanup(func() { killAll(processesRunning(t, sleep...)) })
	a := startAgent(t)
	script := fmt.Sprintf("(setsid %s > /dev/null 2>&1 &); echo up", strings.Join(sleep, " "))
	a.request(1, execArgv(dir, []string{"sh", "-c", script}), nil)
	if got := a.reply(1); got["exitCode"] != float64(0) {
		t.Fatalf("result %v", got)
	}
	// Another command settling sweeps the adopted processes again; the job must survive that too.
	a.request(2, execArgv(dir, []string{"true"}), nil)
	a.reply(2)
	waitProcesses(t, 1, sleep...)
	a.end()
	waitProcesses(t, 0, sleep...)
}

// The agent reads its stdin with blocking reads (stdin_reader.go): a pipe it is given stays blocking, in the
// serving process (the guardian's child) and in the guardian.
func TestStdinStaysBlocking(t *testing.T) {
	a := startAgent(t)
	a.request(1, `{"op":"hello","protocol":1}`, nil)
	a.reply(1)
	for _, pid := range []int{a.pid(), a.serverPid()} {
		info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/0", pid))
		if err != nil {
			t.Fatal(err)
		}
		var flags int64 = -1
		for _, line := range strings.Split(string(info), "\n") {
			if rest, ok := strings.CutPrefix(line, "flags:"); ok {
				flags, err = strconv.ParseInt(strings.TrimSpace(rest), 8, 64)
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		if flags < 0 || flags&syscall.O_NONBLOCK != 0 {
			t.Fatalf("process %d: stdin flags %o, want no O_NONBLOCK", pid, flags)
		}
	}
}
