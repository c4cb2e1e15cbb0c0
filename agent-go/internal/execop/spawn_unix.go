//go:build unix

package execop

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/outpost-dev/outpost/agent-go/internal/errno"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
	"github.com/outpost-dev/outpost/agent-go/internal/reaper"
)

// platformState is the runner's per-platform state: the null device every command reads as stdin.
type platformState struct {
	devNullOnce sync.Once
	devNull     *os.File
	devNullErr  error
}

// child is a started command: the leader of its own session and process group.
type child struct {
	proc *os.Process
	pid  int
	// outputs are the agent's ends of the command's stdout and stderr (read by readOutput).
	*commandOutputs

	mu     sync.Mutex
	reaped bool
	state  *os.ProcessState
}

// spawn starts a planned command in a new session, with socket pairs for its output. A script without "#!"
// runs through /bin/sh, as execvp does; failures carry Node's spawn messages.
func (r *Runner) spawn(p *plan) (*child, *proto.Failure) {
	c, err := r.start(p.path, p.argv, p)
	if errors.Is(err, syscall.ENOEXEC) {
		c, err = r.start("/bin/sh", append([]string{"/bin/sh", p.path}, p.argv[1:]...), p)
	}
	if err != nil {
		return nil, spawnFailure(p.program, errno.Code(err))
	}
	return c, nil
}

func (r *Runner) nullDevice() (*os.File, error) {
	p := &r.platform
	p.devNullOnce.Do(func() { p.devNull, p.devNullErr = os.Open(os.DevNull) })
	return p.devNull, p.devNullErr
}

// start forks and execs path with fresh socket pairs for stdout and stderr, as Node gives them (X13).
func (r *Runner) start(path string, argv []string, p *plan) (*child, error) {
	var stdin, stdinWriter *os.File
	if p.stdin != nil {
		// A "pipe" stdin is a socket pair under libuv too; the agent's end is non-blocking (netpoller).
		parent, read, err := socketPair()
		if err != nil {
			return nil, err
		}
		defer read.Close()
		stdin, stdinWriter = read, os.NewFile(uintptr(parent), "stdin")
	} else {
		devNull, err := r.nullDevice()
		if err != nil {
			return nil, err
		}
		stdin = devNull
	}
	outputs, childEnds, err := newOutputs()
	if err != nil {
		closeAll(stdinWriter)
		return nil, err
	}
	var proc *os.Process
	// Registered as the agent's own child, so no orphan sweep takes it for an adopted process.
	_, err = reaper.Spawn(func() (int, error) {
		var err error
		proc, err = os.StartProcess(path, argv, &os.ProcAttr{
			Dir:   p.dir,
			Env:   p.env,
			Files: []*os.File{stdin, childEnds[stdout], childEnds[stderr]},
			Sys:   &syscall.SysProcAttr{Setsid: true},
		})
		if err != nil {
			return 0, err
		}
		return proc.Pid, nil
	})
	closeAll(childEnds[:]...)
	if err == nil {
		if err = outputs.poller.watch(); err != nil {
			// Output that cannot be read must not run unseen: the new group goes at once.
			_ = unix.Kill(-proc.Pid, unix.SIGKILL)
			_, _ = proc.Wait()
			reaper.Disown(proc.Pid)
		}
	}
	if err != nil {
		closeAll(stdinWriter)
		outputs.poller.close()
		outputs.closeFds()
		return nil, err
	}
	if stdinWriter != nil {
		go func() {
			// Errors are ignored, as Node ignores stdin errors of the WSL transport.
			_, _ = io.WriteString(stdinWriter, *p.stdin)
			_ = stdinWriter.Close()
		}()
	}
	return &child{proc: proc, pid: proc.Pid, commandOutputs: outputs}, nil
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			_ = f.Close()
		}
	}
}

// killTree sends SIGKILL to the whole process group, or to the process alone if the group is gone. Once the
// leader is reaped its pid may be reused, so only the group (which keeps the id reserved while it has
// members) is signalled then.
func (c *child) killTree() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := unix.Kill(-c.pid, unix.SIGKILL); err != nil && !c.reaped {
		_ = unix.Kill(c.pid, unix.SIGKILL)
	}
}

// exitCode reaps the process and returns its exit code: the status, 128 + the signal that killed it, or 1.
func (c *child) exitCode() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.reaped {
		c.state, _ = c.proc.Wait()
		c.reaped = true
		reaper.Disown(c.pid)
	}
	if c.state == nil {
		return 1
	}
	status, ok := c.state.Sys().(syscall.WaitStatus)
	switch {
	case !ok:
		return 1
	case status.Exited():
		return status.ExitStatus()
	case status.Signaled():
		return 128 + int(status.Signal())
	default:
		return 1
	}
}
