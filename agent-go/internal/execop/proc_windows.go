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

// selectShell picks the shell for a string command: the configured one, Git Bash, `where bash.exe`.
func selectShell(shellPath string) (string, *proto.Failure) {
	if shellPath != "" {
		return customShell(shellPath)
	}
	var candidates []string
	for _, variable := range []string{"ProgramFiles", "ProgramFiles(x86)"} {
		if dir := os.Getenv(variable); dir != "" {
			candidates = append(candidates, filepath.Join(dir, "Git", "bin", "bash.exe"))
		}
	}
	for _, candidate := range candidates {
		if exists(candidate) {
			return candidate, nil
		}
	}
	if found := firstLineOf("where", "bash.exe"); found != "" && exists(found) {
		return found, nil
	}
	return "", &proto.Failure{Code: "shell_unavailable", Message: gitBashNotFound(candidates)}
}

// configureLookup hides the lookup helper's window.
func configureLookup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{HideWindow: true, CreationFlags: windows.CREATE_NO_WINDOW}
}

// spawn starts the command: the program is searched like libuv does, arguments are quoted like libuv does,
// the environment block is built like libuv does, and the process joins the agent's job object.
func (r *Runner) spawn(spec *spawnSpec) (*child, *proto.Failure) {
	// Node refuses batch files by the name it is given, before any lookup, and names no program (WIN10).
	if isBatchFile(spec.file) {
		return nil, spawnError("spawn EINVAL")
	}
	if info, err := os.Stat(spec.dir); err == nil && !info.IsDir() {
		return nil, spawnFailure(spec.file, "ENOTDIR")
	}
	search, ok := lookupEnv(spec.env, "PATH", true)
	if !ok {
		search = os.Getenv("PATH")
	}
	_, skipCwd := os.LookupEnv("NoDefaultCurrentDirectoryInExePath")
	path, found := searchWindowsPath(spec.file, spec.dir, search, skipCwd, func(p string) bool {
		info, err := os.Stat(p)
		return err == nil && !info.IsDir()
	})
	if !found {
		return nil, spawnFailure(spec.file, "ENOENT")
	}
	c, err := r.start(path, spec)
	if err != nil {
		return nil, spawnFailure(spec.file, errno.Code(err))
	}
	r.joinJob(c.pid)
	return c, nil
}

func (r *Runner) start(path string, spec *spawnSpec) (*child, error) {
	var stdin, stdinWriter *os.File
	var err error
	if spec.stdin != nil {
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
	argv := append([]string{spec.file}, spec.args...)
	proc, err := os.StartProcess(path, argv, &os.ProcAttr{
		Dir:   spec.dir,
		Env:   windowsEnvBlock(spec.env, os.LookupEnv),
		Files: []*os.File{stdin, outW, errW},
		Sys: &syscall.SysProcAttr{
			CmdLine:       windowsCommandLine(argv),
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
			_, _ = io.WriteString(stdinWriter, *spec.stdin)
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
