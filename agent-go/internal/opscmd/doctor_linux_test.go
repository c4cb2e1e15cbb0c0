package opscmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDoctorWarnsAboutLowInotifyLimits(t *testing.T) {
	dir := t.TempDir()
	old := procInotify
	procInotify = dir
	t.Cleanup(func() { procInotify = old })
	if err := os.WriteFile(filepath.Join(dir, "max_user_watches"), []byte("8192\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "max_user_instances"), []byte("8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	status, report := doctorJSON(t)
	watches, instances := findCheck(t, report, "inotify-watches"), findCheck(t, report, "inotify-instances")
	if status != 0 || watches.Verdict != verdictWarn || !strings.Contains(watches.Detail, "8192") ||
		!strings.Contains(watches.Hint, "max_user_watches") || instances.Verdict != verdictWarn {
		t.Fatalf("status %d, checks %+v / %+v", status, watches, instances)
	}
	os.Remove(filepath.Join(dir, "max_user_watches"))
	if _, report := doctorJSON(t); findCheck(t, report, "inotify-watches").Verdict != verdictWarn {
		t.Fatal("an unreadable limit must be a warning")
	}
}

func TestDoctorChecksOrphanCleanupAndWatchMode(t *testing.T) {
	_, report := doctorJSON(t)
	if c := findCheck(t, report, "orphans"); c.Verdict != verdictOK || !strings.Contains(c.Detail, "subreaper") {
		t.Fatalf("orphans check %+v", c)
	}
	// This machine's home and /tmp are local file systems: watchers use native events.
	if c := findCheck(t, report, "watch-mode"); c.Verdict != verdictOK {
		t.Fatalf("watch-mode check %+v", c)
	}
}
