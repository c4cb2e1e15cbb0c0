//go:build unix

package execop

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/outpost-dev/outpost/agent-go/internal/errno"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
	"github.com/outpost-dev/outpost/agent-go/internal/reaper"
)

// defaultSearchPath is libuv's _PATH_DEFPATH, searched when the command's environment has no PATH (Node with
// env {} finds /usr/bin programs but not /usr/local/bin ones).
const defaultSearchPath = "/usr/bin:/bin"

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

// shellSearch is where a string command's shell is looked for when none is configured. It is a value (not
// literals inside selectShell) so tests can reach every fallback whatever the machine has installed.
type shellSearch struct {
	// bashPath is the bash tried first.
	bashPath string
	// lookup returns the first line printed by the bash lookup command, or "" when it fails.
	lookup func() string
}

// unixShells is Durable's search: /bin/bash, then `which bash`.
var unixShells = shellSearch{bashPath: "/bin/bash", lookup: func() string { return firstLineOf("which", "bash") }}

// selectShell picks the shell for a string command: the configured one, /bin/bash, `which bash`, then sh.
func selectShell(shellPath string) (string, *proto.Failure) { return unixShells.selectShell(shellPath) }

func (s shellSearch) selectShell(shellPath string) (string, *proto.Failure) {
	if shellPath != "" {
		return customShell(shellPath)
	}
	if exists(s.bashPath) {
		return s.bashPath, nil
	}
	if found := s.lookup(); found != "" && exists(found) {
		return found, nil
	}
	return "sh", nil
}

// configureLookup puts the lookup helper in its own group, killed as a whole on timeout.
func configureLookup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error {
		if err := unix.Kill(-cmd.Process.Pid, unix.SIGKILL); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
}

// spawn starts the command in a new session. The program is searched on the command's own PATH (execvp
// rules), a script without "#!" runs through /bin/sh, and failures carry Node's spawn messages.
func (r *Runner) spawn(spec *spawnSpec) (*child, *proto.Failure) {
	if info, err := os.Stat(spec.dir); err == nil && !info.IsDir() {
		return nil, spawnFailure(spec.file, "ENOTDIR")
	}
	path, code := findProgram(spec.file, spec.dir, spec.env)
	if code != "" {
		return nil, spawnFailure(spec.file, code)
	}
	argv := append([]string{spec.file}, spec.args...)
	c, err := r.start(path, argv, spec)
	if errors.Is(err, syscall.ENOEXEC) {
		c, err = r.start("/bin/sh", append([]string{"/bin/sh", path}, spec.args...), spec)
	}
	if err != nil {
		return nil, spawnFailure(spec.file, errno.Code(err))
	}
	return c, nil
}

func (r *Runner) nullDevice() (*os.File, error) {
	p := &r.platform
	p.devNullOnce.Do(func() { p.devNull, p.devNullErr = os.Open(os.DevNull) })
	return p.devNull, p.devNullErr
}

// start forks and execs path with fresh socket pairs for stdout and stderr, as Node gives them (X13).
func (r *Runner) start(path string, argv []string, spec *spawnSpec) (*child, error) {
	var stdin, stdinWriter *os.File
	if spec.stdin != nil {
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
			Dir:   spec.dir,
			Env:   envStrings(spec.env),
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
			_, _ = io.WriteString(stdinWriter, *spec.stdin)
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

// findProgram searches file like execvp with the command's environment: a name with a slash is used as is
// (relative to the command's directory); otherwise each PATH entry is tried in order, an empty entry meaning
// the command's directory. A candidate that exists but cannot be executed is remembered (EACCES) and the
// search goes on; nothing found is ENOENT.
func findProgram(file, dir string, env []envEntry) (string, string) {
	if strings.Contains(file, "/") {
		return file, ""
	}
	search, ok := lookupEnv(env, "PATH", false)
	if !ok {
		search = defaultSearchPath
	}
	sawEACCES := false
	for _, entry := range strings.Split(search, ":") {
		candidate := file
		if entry != "" {
			candidate = entry + "/" + file
		}
		if !filepath.IsAbs(candidate) {
			candidate = filepath.Join(dir, candidate)
		}
		switch code := executable(candidate); code {
		case "":
			return candidate, ""
		case "EACCES":
			sawEACCES = true
		case "ENOENT", "ENOTDIR", "ESTALE", "ENODEV", "ETIMEDOUT", "ENAMETOOLONG":
		default:
			return "", code
		}
	}
	if sawEACCES {
		return "", "EACCES"
	}
	return "", "ENOENT"
}

// executable returns "" when execve could run path, else the libuv code execve would fail with.
func executable(path string) string {
	info, err := os.Stat(path)
	if err != nil {
		if code := errno.Code(err); code != errno.Unknown {
			return code
		}
		return "ENOENT"
	}
	if !info.Mode().IsRegular() {
		return "EACCES"
	}
	if err := unix.Access(path, unix.X_OK); err != nil {
		return "EACCES"
	}
	return ""
}
