package opscmd

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// procInotify is where Linux publishes the inotify limits; a variable for tests.
var procInotify = "/proc/sys/fs/inotify"

// platformChecks are Linux's own checks.
func platformChecks() []func() check {
	return []func() check{checkInotifyWatches, checkInotifyInstances, checkSubreaper}
}

// readLimit reads one number from /proc/sys/fs/inotify.
func readLimit(name string) (int, error) {
	data, err := os.ReadFile(procInotify + "/" + name)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(data)))
}

// checkInotifyWatches compares the per-user watch limit with the directories one default watcher may watch
// natively; past the limit a watcher falls back to polling (and reports an overflow).
func checkInotifyWatches() check {
	limit, err := readLimit("max_user_watches")
	if err != nil {
		return check{"inotify-watches", verdictWarn, fmt.Sprintf("cannot read max_user_watches: %v", err),
			"native watching may be unavailable; watchers would poll"}
	}
	if limit < defaultWatchDirectories {
		return check{"inotify-watches", verdictWarn,
			fmt.Sprintf("max_user_watches %d is below the %d directories a watcher may watch", limit, defaultWatchDirectories),
			"sysctl -w fs.inotify.max_user_watches=524288 (watchers of larger trees switch to polling)"}
	}
	return check{Name: "inotify-watches", Verdict: verdictOK,
		Detail: fmt.Sprintf("max_user_watches %d (a watcher uses one per directory, at most %d by default)", limit,
			defaultWatchDirectories)}
}

// minInotifyInstances is how many watchers a connection should be able to open natively at once.
const minInotifyInstances = 32

// checkInotifyInstances checks the per-user limit of inotify instances (each watcher holds one).
func checkInotifyInstances() check {
	limit, err := readLimit("max_user_instances")
	if err != nil {
		return check{"inotify-instances", verdictWarn, fmt.Sprintf("cannot read max_user_instances: %v", err), ""}
	}
	if limit < minInotifyInstances {
		return check{"inotify-instances", verdictWarn, fmt.Sprintf("max_user_instances %d allows few native watchers", limit),
			"sysctl -w fs.inotify.max_user_instances=1024"}
	}
	return check{Name: "inotify-instances", Verdict: verdictOK, Detail: fmt.Sprintf("max_user_instances %d", limit)}
}

// checkSubreaper checks that this kernel lets the agent become a child subreaper, which its guardian and orphan
// sweeps need to kill descendants that left their command's process group (spec/semantics.md AL).
func checkSubreaper() check {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return check{"orphans", verdictWarn, fmt.Sprintf("PR_SET_CHILD_SUBREAPER failed: %v", err),
			"descendants that call setsid can outlive cleanup(), timeouts and the agent"}
	}
	return check{Name: "orphans", Verdict: verdictOK,
		Detail: "child subreaper available: no command's descendant outlives the agent"}
}
