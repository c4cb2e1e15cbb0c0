//go:build unix

package execop

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Every branch of the shell search, on a machine whose files and `which bash` the test decides.
func TestShellSearchFallbacks(t *testing.T) {
	dir := t.TempDir()
	otherBash := filepath.Join(dir, "usr-local-bash")
	if err := os.WriteFile(otherBash, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	cases := []struct {
		name        string
		shellPath   string
		fixedBash   bool
		lookupSays  string
		want        string
		wantCode    string
		wantLookups int
	}{
		{"configured shell missing", missing, true, otherBash, "", "shell_unavailable", 0},
		{"configured shell present", otherBash, true, "", otherBash, "", 0},
		{"fixed bash present", "", true, otherBash, "/bin/bash", "", 0},
		{"fixed bash absent, which finds one", "", false, otherBash, otherBash, "", 1},
		{"neither: sh", "", false, "", "sh", "", 1},
		{"which names a missing file: sh", "", false, filepath.Join(dir, "gone-bash"), "sh", "", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lookups := 0
			m := hostMachine()
			m.stat = func(path string) (os.FileInfo, error) {
				if path == "/bin/bash" && !c.fixedBash {
					return nil, os.ErrNotExist
				}
				return os.Stat(path)
			}
			m.findBash = func() string {
				lookups++
				return c.lookupSays
			}
			got, failure := chooseShell(c.shellPath, m)
			switch {
			case c.wantCode != "":
				if failure == nil || failure.Code != c.wantCode || failure.Message != "Custom shell path not found: "+c.shellPath {
					t.Fatalf("got %q, %+v; want failure %s", got, failure, c.wantCode)
				}
			case failure != nil || got != c.want:
				t.Fatalf("got %q, %+v; want %q", got, failure, c.want)
			}
			if lookups != c.wantLookups {
				t.Fatalf("the lookup ran %d times, want %d", lookups, c.wantLookups)
			}
		})
	}
}

// The lookup the agent really uses after /bin/bash: the first line of `which bash`.
func TestDefaultShellSearch(t *testing.T) {
	if fixedBash != "/bin/bash" {
		t.Fatalf("first candidate %q, want /bin/bash", fixedBash)
	}
	if _, err := exec.LookPath("which"); err != nil {
		t.Fatal("this test needs `which` on the machine")
	}
	want, err := exec.LookPath("bash")
	if err != nil {
		want = ""
	}
	if got := hostMachine().findBash(); got != want {
		t.Fatalf("lookup printed %q, want the bash on PATH %q", got, want)
	}
}
