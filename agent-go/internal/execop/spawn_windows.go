//go:build windows

package execop

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/outpost-dev/outpost/agent-go/internal/errno"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// platformState holds the job object every command joins: when the agent dies, Windows kills them all.
type platformState struct {
	jobOnce sync.Once
	job     windows.Handle
}

// child is a started command.
type child struct {
	proc *os.Process
	pid  int
	// output reads the child's stdout and stderr pipes.
	output *outputReader

	mu     sync.Mutex
	state  *os.ProcessState
	killed bool
}

// spawn starts a planned command with libuv's command-line quoting and named pipes for its output, and puts it
// in the agent's job object; failures carry Node's spawn messages.
func (r *Runner) spawn(p *plan) (*child, *proto.Failure) {
	c, err := r.start(p)
	if err != nil {
		return nil, spawnFailure(p.program, errno.Code(err))
	}
	r.joinJob(c.pid)
	return c, nil
}

func (r *Runner) start(p *plan) (*child, error) {
	var stdin, stdinWriter *os.File
	var err error
	if p.stdin != nil {
		stdin, stdinWriter, err = os.Pipe()
		if err != nil {
			return nil, err
		}
		defer stdin.Close()
	} else {
		stdin, err = os.Open(os.DevNull)
		if err != nil {
			return nil, err
		}
		defer stdin.Close()
	}
	outR, outW, err := newOutputPipe()
	if err != nil {
		closeFiles(stdinWriter)
		return nil, err
	}
	errR, errW, err := newOutputPipe()
	if err != nil {
		_ = windows.CloseHandle(outR)
		closeFiles(stdinWriter, outW)
		return nil, err
	}
	output, err := newOutputReader(outR, errR)
	if err != nil {
		closeFiles(stdinWriter, outW, errW)
		return nil, err
	}
	proc, err := os.StartProcess(p.path, p.argv, &os.ProcAttr{
		Dir:   p.dir,
		Env:   p.env,
		Files: []*os.File{stdin, outW, errW},
		Sys: &syscall.SysProcAttr{
			CmdLine:       windowsCommandLine(p.argv),
			HideWindow:    true,
			CreationFlags: windows.CREATE_NO_WINDOW,
		},
	})
	closeFiles(outW, errW)
	if err != nil {
		closeFiles(stdinWriter)
		output.close()
		return nil, err
	}
	if stdinWriter != nil {
		go func() {
			_, _ = io.WriteString(stdinWriter, *p.stdin)
			_ = stdinWriter.Close()
		}()
	}
	return &child{proc: proc, pid: proc.Pid, output: output}, nil
}

func closeFiles(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			_ = f.Close()
		}
	}
}

// joinJob puts the process in the agent's job object (created once, killing its members when it closes).
func (r *Runner) joinJob(pid int) {
	p := &r.platform
	p.jobOnce.Do(func() {
		job, err := windows.CreateJobObject(nil, nil)
		if err != nil {
			return
		}
		info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
		info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE |
			windows.JOB_OBJECT_LIMIT_BREAKAWAY_OK | windows.JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK |
			windows.JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION
		if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
			uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
			_ = windows.CloseHandle(job)
			return
		}
		p.job = job
	})
	if p.job == 0 {
		return
	}
	handle, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return
	}
	defer windows.CloseHandle(handle)
	_ = windows.AssignProcessToJobObject(p.job, handle)
}

// waitExit blocks until the process exited.
func (c *child) waitExit() {
	state, _ := c.proc.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state = state
}

// exitCode returns the exit code as an unsigned 32-bit value (an access violation is 3221225477), or 1.
func (c *child) exitCode() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == nil {
		return 1
	}
	if status, ok := c.state.Sys().(syscall.WaitStatus); ok {
		return int(status.ExitCode)
	}
	return 1
}

// killTree runs taskkill /F /T on the process, hidden and not waited for (once per command).
func (c *child) killTree() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.killed {
		return
	}
	c.killed = true
	root := os.Getenv("SystemRoot")
	if root == "" {
		root = `C:\Windows`
	}
	cmd := exec.Command(filepath.Join(root, "System32", "taskkill.exe"), "/F", "/T", "/PID", strconv.Itoa(c.pid))
	cmd.SysProcAttr = &syscall.SysProcAttr{HideWindow: true, CreationFlags: windows.CREATE_NO_WINDOW}
	if err := cmd.Start(); err == nil {
		go func() { _ = cmd.Wait() }()
	}
}
