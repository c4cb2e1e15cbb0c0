//go:build linux

package guardian

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/outpost-dev/outpost/agent-go/internal/reaper"
)

// Supported reports whether this platform runs the agent under a guardian.
const Supported = true

// lifelineFD is the server's descriptor for the lifeline (after stdin, stdout, stderr).
const lifelineFD = 3

// Lifeline returns, in a server started by a guardian, a channel closed when the guardian is gone; ok is
// false in any other process. It clears the marker so that commands do not inherit it, and keeps the
// lifeline from leaking into them.
func Lifeline() (gone <-chan struct{}, ok bool) {
	value, found := os.LookupEnv(lifelineEnv)
	if !found {
		return nil, false
	}
	_ = os.Unsetenv(lifelineEnv)
	fd, err := strconv.Atoi(value)
	if err != nil || fd < 0 {
		return nil, false
	}
	unix.CloseOnExec(fd)
	line := os.NewFile(uintptr(fd), "lifeline")
	closed := make(chan struct{})
	go func() {
		// Nothing is ever written: the read returns when the guardian's end closes, i.e. when it died.
		_, _ = io.Copy(io.Discard, line)
		close(closed)
	}()
	return closed, true
}

// Run is the guardian: it starts the agent again as the server with extraEnv added, waits for it while
// passing on termination signals, kills whatever the server left behind and returns the server's exit
// status. It returns ok false (and the caller serves by itself) when the server cannot be started.
func Run(extraEnv []string) (status int, ok bool) {
	if !reaper.Become() {
		return 0, false
	}
	read, write, err := os.Pipe()
	if err != nil {
		return 0, false
	}
	env := append(os.Environ(), extraEnv...)
	env = append(env, fmt.Sprintf("%s=%d", lifelineEnv, lifelineFD))
	// Termination signals are caught before the start, so none can kill the guardian in between.
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(signals)
	server, err := os.StartProcess("/proc/self/exe", os.Args, &os.ProcAttr{
		Env:   env,
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr, read},
	})
	_ = read.Close()
	if err != nil {
		_ = write.Close()
		return 0, false
	}
	// The client's streams belong to the server: the client must see the end of the output when the server
	// exits, not when the guardian does.
	closeStdio()

	exited := make(chan *os.ProcessState, 1)
	go func() {
		state, _ := server.Wait()
		exited <- state
	}()
	var state *os.ProcessState
	for state == nil {
		select {
		case sig := <-signals:
			_ = server.Signal(sig)
		case state = <-exited:
		}
	}
	reaper.KillDescendants()
	_ = write.Close()
	return exitStatus(state), true
}

// closeStdio points stdin and stdout at /dev/null, so the guardian holds no end of the client's streams.
func closeStdio() {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer null.Close()
	for _, fd := range []int{0, 1} {
		_ = unix.Dup3(int(null.Fd()), fd, 0)
	}
}

// exitStatus is the status the guardian exits with: the server's, or 128 + the signal that killed it.
func exitStatus(state *os.ProcessState) int {
	if state == nil {
		return 1
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return state.ExitCode()
}
