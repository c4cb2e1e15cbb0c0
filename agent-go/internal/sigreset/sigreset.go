// Package sigreset gives every command the agent starts default signal dispositions and an empty signal mask,
// as libuv does for Node's children.
//
// Go's os/exec has no pre-exec hook. In a forked child the runtime resets only the handlers Go installed and
// restores the signal mask the agent STARTED with, so a signal that was ignored (nohup, a trap with an empty action, a
// non-interactive shell's `&`) or blocked when the agent started would leak into every command. The fix is made
// once, at start-up, instead of per command:
//
//   - Everywhere: every signal still ignored is handed to the Go runtime (signal.Notify on a drained channel),
//     so children get SIG_DFL while the agent itself keeps ignoring it, as its launcher asked. The few the
//     runtime refuses (Linux signals 32-34) are reset to SIG_DFL directly.
//   - Linux/Android: a child inherits the forking thread's mask, which is the start-up mask minus what the
//     runtime unblocks (the main thread's SigBlk in /proc/self/status). When it is not empty, Ensure
//     re-executes the agent once from a thread whose mask it cleared (execve keeps the thread's mask and
//     resets caught signals to the default). An environment marker, removed again at once, prevents a loop
//     and carries the set of signals that were ignored. A clean start costs nothing; no command pays for it.
//
// The agent's own reaction to termination signals stays with main: it should skip the signals for which
// IgnoredAtStart is true and treat SIGHUP/SIGINT/SIGTERM otherwise as "stop serving and kill every command
// group". SIGPIPE must be handled (not ignored) so a closed stdout fails with EPIPE instead of killing the
// agent; a handled signal is still reset to the default in children.
package sigreset

import (
	"os"
	"strconv"
	"syscall"
)

// marker is the environment variable that tells the re-executed agent it already reset its signal state. Its
// value is the hex bit set (bit n-1 for signal n) of the signals ignored when the agent was first started.
const marker = "OUTPOST_SIGRESET_DONE"

// ignoredAtStart is the bit set of signals the agent's launcher left ignored.
var ignoredAtStart uint64

// reexecuted is true in an agent that Ensure re-executed.
var reexecuted bool

// drain receives the signals the agent keeps ignoring; nobody needs their values.
var drain = make(chan os.Signal, 16)

func init() {
	go func() {
		for range drain {
		}
	}()
}

// Ensure makes the signal state children inherit clean. Call it first thing in main, before any goroutine
// that starts processes. It may re-execute the agent (Linux); it never fails: when a step is impossible the
// agent goes on with what could be fixed.
func Ensure() { ensure() }

// IgnoredAtStart reports whether the agent was started with sig ignored, as far as that can be seen: the Go
// runtime keeps an inherited SIG_IGN visible only for SIGHUP and SIGINT (nohup, background jobs of
// non-interactive shells), the job-control stops and signals 32-34; it silently takes over the others. The
// agent keeps ignoring the visible ones for itself; children get the default for all of them.
// ChildEnv is the environment entry that tells a copy of the agent started by this one (the server under the
// guardian) which signals the launcher left ignored; the copy starts clean, as after the re-execution.
func ChildEnv() string { return marker + "=" + strconv.FormatUint(ignoredAtStart, 16) }

func IgnoredAtStart(sig syscall.Signal) bool {
	return sig >= 1 && sig <= 64 && ignoredAtStart&(1<<(uint(sig)-1)) != 0
}
