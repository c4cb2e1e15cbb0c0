package execop

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/outpost-dev/outpost/agent-go/internal/reaper"
)

// shellLookupTimeout bounds `which bash` / `where bash.exe`.
const shellLookupTimeout = 5 * time.Second

// machine is every look the planning step takes at the agent's machine. Planning makes no other system call,
// so a test can hand it a made-up machine, and a reader sees here all that a plan depends on.
type machine struct {
	// environ is the agent's environment, KEY=VALUE (os.Environ).
	environ func() []string
	// getenv reads one of the agent's variables (os.LookupEnv).
	getenv func(key string) (string, bool)
	// stat describes a file, following links (os.Stat).
	stat func(path string) (fs.FileInfo, error)
	// canExecute reports whether execve may run a regular file (access X_OK; POSIX only).
	canExecute func(path string) bool
	// findBash runs the platform's bash lookup (`which bash`, `where bash.exe`) and returns the first line it
	// printed, or "" when it failed.
	findBash func() string
}

// hostMachine is the machine the agent runs on.
func hostMachine() machine {
	return machine{
		environ:    os.Environ,
		getenv:     os.LookupEnv,
		stat:       os.Stat,
		canExecute: canExecute,
		findBash:   findBash,
	}
}

// exists reports whether path names something, following links.
func (m machine) exists(path string) bool {
	_, err := m.stat(path)
	return err == nil
}

// variable returns one of the agent's variables, "" when unset.
func (m machine) variable(key string) string {
	value, _ := m.getenv(key)
	return value
}

// firstLineOf runs a lookup command (which/where) and returns the first line of its trimmed output when it
// exits with status 0 within the lookup timeout.
func firstLineOf(name string, args ...string) string {
	ctx, cancel := context.WithTimeout(context.Background(), shellLookupTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	configureLookup(cmd)
	var buf strings.Builder
	cmd.Stdout = &buf
	// Registered as the agent's own child, so no orphan sweep takes it for an adopted process.
	pid, err := reaper.Spawn(func() (int, error) {
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	})
	if err != nil {
		return ""
	}
	err = cmd.Wait()
	reaper.Disown(pid)
	if err != nil {
		return ""
	}
	text := strings.TrimSpace(buf.String())
	line, _, _ := strings.Cut(text, "\n")
	return strings.TrimSuffix(line, "\r")
}
