package opscmd

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func doctorJSON(t *testing.T) (int, doctorReport) {
	t.Helper()
	status, out, errOut := runArgs("doctor", "--json")
	var report doctorReport
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("not JSON: %q (stderr %q)", out, errOut)
	}
	return status, report
}

func findCheck(t *testing.T, report doctorReport, name string) check {
	t.Helper()
	for _, c := range report.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %s check in %+v", name, report.Checks)
	return check{}
}

func TestDoctorOnThisMachine(t *testing.T) {
	status, report := doctorJSON(t)
	if status != 0 || !report.OK {
		t.Fatalf("status %d, report %+v", status, report)
	}
	for _, name := range []string{"shell", "tmpdir", "clock"} {
		if c := findCheck(t, report, name); c.Verdict == verdictFail {
			t.Errorf("%s failed: %+v", name, c)
		}
	}
	status, text, _ := runArgs("doctor")
	if status != 0 || !strings.Contains(text, "ok    tmpdir") {
		t.Fatalf("text report %q", text)
	}
}

func TestDoctorFailsOnAnUnwritableTempDir(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	for _, name := range []string{"TMPDIR", "TMP", "TEMP"} {
		t.Setenv(name, missing)
	}
	status, report := doctorJSON(t)
	c := findCheck(t, report, "tmpdir")
	if status != 1 || report.OK || c.Verdict != verdictFail || !strings.Contains(c.Detail, missing) || c.Hint == "" {
		t.Fatalf("status %d, ok %v, tmpdir check %+v", status, report.OK, c)
	}
}
