package opscmd

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/outpost-dev/outpost/agent-go/internal/execop"
	"github.com/outpost-dev/outpost/agent-go/internal/sysinfo"
	"github.com/outpost-dev/outpost/agent-go/internal/watch"
)

// Verdicts of a doctor check. A warning says that something works in a degraded way (watching polls, say);
// only a failure makes `outpost doctor` exit 1.
const (
	verdictOK   = "ok"
	verdictWarn = "warn"
	verdictFail = "fail"
)

// check is one line of the doctor's report.
type check struct {
	Name    string `json:"name"`
	Verdict string `json:"verdict"`
	Detail  string `json:"detail"`
	Hint    string `json:"hint,omitempty"`
}

// doctorReport is what `outpost doctor --json` prints.
type doctorReport struct {
	OK     bool    `json:"ok"`
	Checks []check `json:"checks"`
}

// defaultWatchDirectories is the watch budget a watcher has by default (NodeWatchOptions.maxDirectories): one
// native watch per directory.
const defaultWatchDirectories = 10_000

// doctorChecks are the checks, in report order; the platform files add theirs (platformChecks).
func doctorChecks() []func() check {
	return append([]func() check{checkShell, checkTempDir, checkClock, checkWatchMode}, platformChecks()...)
}

// runDoctor reports the machine's readiness to run the agent, one check per line; it exits 1 when a check fails.
func runDoctor(args []string, stdout, stderr io.Writer) int {
	flags := newFlags("doctor", stderr)
	asJSON := flags.Bool("json", false, "print a JSON object")
	if status, ok := parse(flags, args); !ok {
		return status
	}
	report := doctorReport{OK: true}
	for _, run := range doctorChecks() {
		c := run()
		report.OK = report.OK && c.Verdict != verdictFail
		report.Checks = append(report.Checks, c)
	}
	status := 0
	if !report.OK {
		status = 1
	}
	if *asJSON {
		if printJSON(stdout, report) != 0 {
			return 1
		}
		return status
	}
	for _, c := range report.Checks {
		fmt.Fprintf(stdout, "%-5s %-18s %s\n", c.Verdict, c.Name, c.Detail)
		if c.Hint != "" {
			fmt.Fprintf(stdout, "%-24s hint: %s\n", "", c.Hint)
		}
	}
	return status
}

// checkShell finds the shell string commands run with, as a command would.
func checkShell() check {
	shell, err := execop.DefaultShell()
	if err != nil {
		return check{"shell", verdictFail, err.Error(), "install bash, or configure shellPath"}
	}
	path, err := exec.LookPath(shell)
	if err != nil {
		return check{"shell", verdictFail, fmt.Sprintf("%s not found: %v", shell, err),
			"install bash (string commands run with /bin/bash, `which bash`, then sh)"}
	}
	if filepath.Base(path) != "bash" && filepath.Base(path) != "bash.exe" {
		return check{"shell", verdictWarn, fmt.Sprintf("no bash; string commands run with %s", path),
			"install bash: scripts written for bash may fail under sh"}
	}
	return check{Name: "shell", Verdict: verdictOK, Detail: path}
}

// checkTempDir creates and removes a file in the temporary directory commands' spill files go to.
func checkTempDir() check {
	dir := sysinfo.Current().TempDir
	f, err := os.CreateTemp(dir, ".outpost-doctor-*")
	if err != nil {
		return check{"tmpdir", verdictFail, fmt.Sprintf("%s is not writable: %v", dir, err),
			"set TMPDIR to a writable directory (spill files and createTempDir need one)"}
	}
	name := f.Name()
	f.Close()
	if err := os.Remove(name); err != nil {
		return check{"tmpdir", verdictFail, fmt.Sprintf("cannot remove %s: %v", name, err), ""}
	}
	return check{Name: "tmpdir", Verdict: verdictOK, Detail: dir + " is writable"}
}

// earliestSaneTime is before any build of this agent: a clock earlier than it is wrong.
var earliestSaneTime = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// checkClock catches a clock that is obviously wrong (mtimes and TLS-free SSH still work, but every mtime the
// agent reports would be off) and a clock that does not advance.
func checkClock() check {
	start := time.Now()
	time.Sleep(10 * time.Millisecond)
	elapsed := time.Since(start)
	now := time.Now().UTC()
	switch {
	case now.Before(earliestSaneTime) || now.Year() >= 2100:
		return check{"clock", verdictFail, "the system clock says " + now.Format(time.RFC3339),
			"set the clock (NTP): modification times would be reported wrong"}
	case elapsed < 5*time.Millisecond || elapsed > 5*time.Second:
		return check{"clock", verdictFail, fmt.Sprintf("a 10 ms sleep measured %v", elapsed),
			"the monotonic clock misbehaves: timeouts would be wrong"}
	}
	return check{Name: "clock", Verdict: verdictOK, Detail: now.Format(time.RFC3339)}
}

// checkWatchMode tells whether watchers of the home directory and the working directory would poll (Windows, a
// network or FUSE file system): polling works, but reports changes only every poll interval and costs a rescan.
func checkWatchMode() check {
	info := sysinfo.Current()
	var polling []string
	for _, dir := range []string{info.Home, info.Cwd} {
		if dir != "" && watch.PollsByDefault(dir) {
			polling = append(polling, dir)
		}
	}
	if len(polling) > 0 {
		return check{"watch-mode", verdictWarn, fmt.Sprintf("watchers of %v poll (no reliable native events there)", polling),
			"watch a local file system for native events, or set pollIntervalMs for the polling cost you accept"}
	}
	return check{Name: "watch-mode", Verdict: verdictOK, Detail: "native events for the home and working directories"}
}
