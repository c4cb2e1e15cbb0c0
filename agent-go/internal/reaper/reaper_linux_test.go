package reaper

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startOwn starts argv as this process's own, registered child.
func startOwn(t *testing.T, argv ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	if _, err := Spawn(func() (int, error) {
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		Disown(cmd.Process.Pid)
	})
	return cmd
}

func alive(pid int) bool {
	p, ok := stat(pid)
	return ok && !p.zombie
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}

func TestChildrenAndStartTimes(t *testing.T) {
	cmd := startOwn(t, "sleep", "10")
	pid := cmd.Process.Pid
	if !slices.Contains(children(os.Getpid()), pid) || !slices.Contains(childrenByScan(os.Getpid()), pid) {
		t.Fatalf("child %d not listed: %v / %v", pid, children(os.Getpid()), childrenByScan(os.Getpid()))
	}
	start, ok := StartTicks(pid)
	if now := Ticks(); !ok || start > now || now-start > 10*userHZ {
		t.Fatalf("start %d (ok %v), now %d", start, ok, now)
	}
}

// A sweep reaps and kills only adopted processes (orphans re-parented to this subreaper), and only those the
// caller dooms; the process's own children are never touched.
func TestSweep(t *testing.T) {
	if !Become() {
		t.Fatal("PR_SET_CHILD_SUBREAPER failed")
	}
	own := startOwn(t, "sleep", "100")
	// The shell exits at once; its setsid child is re-parented to this process.
	out, err := exec.Command("sh", "-c", "setsid sleep 100 > /dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(orphan, syscall.SIGKILL) })
	waitFor(t, "the orphan is adopted", func() bool { return slices.Contains(children(os.Getpid()), orphan) })

	start, _ := StartTicks(orphan)
	var seen []uint64
	Sweep(func(ticks uint64) bool { seen = append(seen, ticks); return false })
	if !alive(orphan) || !slices.Equal(seen, []uint64{start}) {
		t.Fatalf("a sweep that dooms nothing saw %v (want only the orphan's %d) or killed it", seen, start)
	}
	Sweep(func(uint64) bool { return true })
	waitFor(t, "the orphan is dead", func() bool { return !alive(orphan) })
	// The next sweep reaps the dead orphan; the own child lives on.
	Sweep(func(uint64) bool { return false })
	waitFor(t, "the orphan is reaped", func() bool { _, ok := stat(orphan); return !ok })
	if !alive(own.Process.Pid) {
		t.Fatal("a sweep killed an own child")
	}
}

func TestKillTree(t *testing.T) {
	cmd := startOwn(t, "sh", "-c", "sleep 100 & sleep 100 & wait")
	pid := cmd.Process.Pid
	waitFor(t, "the shell has two children", func() bool { return len(children(pid)) == 2 })
	kids := children(pid)
	KillTree(pid)
	for _, kid := range kids {
		waitFor(t, "every descendant is dead", func() bool { return !alive(kid) })
	}
}
