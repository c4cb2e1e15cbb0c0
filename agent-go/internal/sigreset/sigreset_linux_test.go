//go:build linux

package sigreset

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/outpost-dev/outpost/agent-go/internal/execop"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// The test binary plays three roles, chosen by modeVar:
//   - launcher: ignore and block signals on a locked thread, then exec itself as the agent (exec keeps both);
//   - agent / plain-agent: (with / without Ensure) run `cat /proc/self/status` through execop and print the
//     child's signal lines.
const modeVar = "SIGRESET_TEST_MODE"

var (
	ignoredByLauncher = []syscall.Signal{syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1,
		syscall.SIGTSTP, syscall.Signal(40), syscall.Signal(64)}
	blockedByLauncher = []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGUSR2, syscall.SIGALRM,
		syscall.SIGCHLD, syscall.Signal(50), syscall.Signal(64), syscall.SIGHUP}
)

func TestMain(m *testing.M) {
	switch os.Getenv(modeVar) {
	case "launcher":
		launch(os.Getenv("SIGRESET_TEST_NEXT"), true)
	case "launcher-ignore-only":
		launch(os.Getenv("SIGRESET_TEST_NEXT"), false)
	case "agent":
		Ensure()
		report()
	case "plain-agent":
		report()
	default:
		os.Exit(m.Run())
	}
}

// launch ignores and blocks signals, then becomes the agent.
func launch(next string, block bool) {
	runtime.LockOSThread()
	for _, sig := range ignoredByLauncher {
		signal.Ignore(sig)
	}
	var set unix.Sigset_t
	bits := (*[8]byte)(unsafe.Pointer(&set))
	for _, sig := range blockedByLauncher {
		bits[(sig-1)/8] |= 1 << ((sig - 1) % 8)
	}
	if block {
		if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, nil); err != nil {
			fail(err)
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, modeVar+"=") {
			env = append(env, kv)
		}
	}
	fail(unix.Exec("/proc/self/exe", os.Args, append(env, modeVar+"="+next)))
}

// childReport is what an agent run prints.
type childReport struct {
	ChildIgn      string
	ChildBlk      string
	OwnBlk        uint64
	Reexecuted    bool
	MarkerVisible bool
	IgnoredINT    bool
	IgnoredTERM   bool
	Survived      bool
}

func report() {
	var out childReport
	status := runChild()
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			out.ChildIgn = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "SigBlk:"); ok {
			out.ChildBlk = strings.TrimSpace(v)
		}
	}
	out.OwnBlk, _ = threadMask()
	out.Reexecuted = reexecuted
	_, out.MarkerVisible = os.LookupEnv(marker)
	out.IgnoredINT = IgnoredAtStart(syscall.SIGINT)
	out.IgnoredTERM = IgnoredAtStart(syscall.SIGTERM)
	if os.Getenv(modeVar) == "agent" {
		// Signals the launcher ignored stay ignored for the agent itself.
		_ = unix.Kill(os.Getpid(), syscall.SIGINT)
		_ = unix.Kill(os.Getpid(), syscall.SIGHUP)
		_ = unix.Kill(os.Getpid(), syscall.SIGTSTP)
	}
	time.Sleep(50 * time.Millisecond)
	out.Survived = true
	raw, _ := json.Marshal(out)
	fmt.Println(string(raw))
	os.Exit(0)
}

// runChild runs `cat /proc/self/status` the way the agent runs every command.
func runChild() string {
	dir := os.TempDir()
	args, _ := json.Marshal(map[string]any{"argv": []string{"cat", "/proc/self/status"}, "cwd": dir, "env": map[string]any{}})
	events := &collect{}
	_, err := execop.New(dir).Handle(&proto.Call{Op: "exec", Args: args, Control: proto.NewControl(), Events: events})
	if err != nil {
		fail(err)
	}
	return events.text.String()
}

type collect struct{ text strings.Builder }

func (c *collect) Emit(_ proto.Queue, _ map[string]any, payload []byte) error {
	c.text.Write(payload)
	return nil
}
func (c *collect) Unsent() int { return 0 }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "helper:", err)
	os.Exit(3)
}

func runAs(t *testing.T, launcher, next string) childReport {
	t.Helper()
	cmd := exec.Command("/proc/self/exe", "-test.run=^$")
	cmd.Env = append(os.Environ(), modeVar+"="+launcher, "SIGRESET_TEST_NEXT="+next)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s run failed: %v (%s)", next, err, out)
	}
	var report childReport
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("bad report %q: %v", out, err)
	}
	return report
}

func TestChildrenGetDefaultDispositionsAndAnEmptyMask(t *testing.T) {
	before := runAs(t, "launcher", "plain-agent")
	// Without the reset the launcher's state leaks into commands: the test can see the problem.
	if before.ChildIgn == "0000000000000000" || before.ChildBlk == "0000000000000000" {
		t.Fatalf("the launcher's signal state did not reach the child without Ensure: %+v", before)
	}
	// The agent's own view hides most of the start-up mask (the runtime unblocks signals it needs on its
	// threads), which is why Ensure cannot decide from /proc/self/status whether children would inherit one.
	if before.ChildBlk != fmt.Sprintf("%016x", before.OwnBlk) {
		t.Fatalf("children no longer inherit the SigBlk the agent sees (%s vs %016x): Ensure's test is wrong",
			before.ChildBlk, before.OwnBlk)
	}
	after := runAs(t, "launcher", "agent")
	if after.ChildIgn != "0000000000000000" || after.ChildBlk != "0000000000000000" {
		t.Fatalf("child signal state SigIgn=%s SigBlk=%s, want all zero", after.ChildIgn, after.ChildBlk)
	}
	if after.MarkerVisible {
		t.Fatal("the re-exec marker is still in the environment")
	}
	if !after.IgnoredINT || after.IgnoredTERM {
		t.Fatalf("IgnoredAtStart wrong: %+v", after)
	}
	if !after.Survived || !after.Reexecuted {
		t.Fatalf("the agent died from a signal its launcher ignored, or was not re-executed: %+v", after)
	}
	// Ignored signals alone are fixed without an exec.
	ignoreOnly := runAs(t, "launcher-ignore-only", "agent")
	if ignoreOnly.ChildIgn != "0000000000000000" || ignoreOnly.ChildBlk != "0000000000000000" ||
		ignoreOnly.Reexecuted || !ignoreOnly.Survived {
		t.Fatalf("ignore-only start: %+v", ignoreOnly)
	}
}

func TestIgnoredAtStartBounds(t *testing.T) {
	saved := ignoredAtStart
	defer func() { ignoredAtStart = saved }()
	// Bit n-1 is signal n: the lowest and the highest signal are seen, their neighbours and anything out of
	// range are not.
	ignoredAtStart = 1<<(syscall.SIGHUP-1) | 1<<63
	for sig, want := range map[syscall.Signal]bool{0: false, syscall.SIGHUP: true, syscall.SIGINT: false, 63: false,
		64: true, 65: false, -1: false} {
		if got := IgnoredAtStart(sig); got != want {
			t.Errorf("IgnoredAtStart(%d) = %v", sig, got)
		}
	}
}
