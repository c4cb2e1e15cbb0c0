//go:build unix

package execop

import (
	"encoding/json"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// Once KillAll ran (the connection ended), a request that arrives late never starts a command: the agent is
// about to exit and nothing may outlive it.
func TestNoCommandStartsAfterKillAll(t *testing.T) {
	dir := t.TempDir()
	r := New(dir)
	r.KillAll()
	out := run(t, r, shell("sleep 9", dir), nil, nil)
	if out.elapsed > 3*time.Second {
		t.Fatalf("exec ran for %v after KillAll", out.elapsed)
	}
	if code := out.code(t); code != "spawn_error" {
		t.Fatalf("failure %s, want spawn_error", code)
	}
}

// A command whose spawn was already under way when KillAll ran is killed the moment the runner learns of it.
func TestCommandSpawnedDuringKillAllDies(t *testing.T) {
	dir := t.TempDir()
	r := New(dir)
	raw, err := json.Marshal(shell("sleep 9", dir))
	if err != nil {
		t.Fatal(err)
	}
	req, fail := parseRequest(&proto.Call{Op: "exec", Args: raw})
	if fail != nil {
		t.Fatal(fail)
	}
	plan, fail := planExec(req, hostMachine())
	if fail != nil {
		t.Fatal(fail)
	}
	c, fail := r.spawn(plan)
	if fail != nil {
		t.Fatal(fail)
	}
	defer c.closeFds()
	r.KillAll() // runs between the fork and track
	r.track(c)
	exited := make(chan struct{})
	go func() {
		c.waitExit()
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(3 * time.Second):
		_ = unix.Kill(-c.pid, unix.SIGKILL)
		<-exited
		t.Fatal("the command spawned during KillAll kept running")
	}
	if code := c.exitCode(); code != 128+int(unix.SIGKILL) {
		t.Fatalf("exit code %d, want the SIGKILL status", code)
	}
	r.untrack(c, true)
}

// The request's frame is released as soon as exec has parsed it, not when the command ends.
func TestExecReleasesItsFrameOnceParsed(t *testing.T) {
	dir := t.TempDir()
	raw, err := json.Marshal(shell("sleep 0.2", dir))
	if err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	call := &proto.Call{ID: 1, Op: "exec", Args: raw, Control: proto.NewControl(), Events: newFakeEvents(),
		OnRelease: func() { close(released) }}
	done := make(chan error, 1)
	go func() {
		_, err := New(dir).Handle(call)
		done <- err
	}()
	select {
	case <-released:
	case err := <-done:
		t.Fatalf("the command ended (%v) before its frame was released", err)
	case <-time.After(5 * time.Second):
		t.Fatal("the frame was never released")
	}
	if call.Args != nil {
		t.Fatal("the released call still holds its JSON")
	}
	if err := <-done; err != nil {
		t.Fatalf("exec failed: %v", err)
	}
}
