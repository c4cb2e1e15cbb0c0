//go:build unix

package execop

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Every branch of the shell search, with the candidates pointed at files the test controls.
func TestShellSearchFallbacks(t *testing.T) {
	dir := t.TempDir()
	bash := filepath.Join(dir, "bash")
	otherBash := filepath.Join(dir, "usr-local-bash")
	for _, path := range []string{bash, otherBash} {
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	missing := filepath.Join(dir, "missing")
	cases := []struct {
		name        string
		shellPath   string
		bashPath    string
		lookupSays  string
		want        string
		wantCode    string
		wantLookups int
	}{
		{"configured shell missing", missing, bash, otherBash, "", "shell_unavailable", 0},
		{"configured shell present", otherBash, bash, "", otherBash, "", 0},
		{"fixed bash present", "", bash, otherBash, bash, "", 0},
		{"fixed bash absent, which finds one", "", missing, otherBash, otherBash, "", 1},
		{"neither: sh", "", missing, "", "sh", "", 1},
		{"which names a missing file: sh", "", missing, filepath.Join(dir, "gone-bash"), "sh", "", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lookups := 0
			search := shellSearch{bashPath: c.bashPath, lookup: func() string {
				lookups++
				return c.lookupSays
			}}
			got, failure := search.selectShell(c.shellPath)
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

// The search the agent really uses: /bin/bash first, then the first line of `which bash`.
func TestDefaultShellSearch(t *testing.T) {
	if unixShells.bashPath != "/bin/bash" {
		t.Fatalf("first candidate %q, want /bin/bash", unixShells.bashPath)
	}
	if _, err := exec.LookPath("which"); err != nil {
		t.Skip("no which on this machine")
	}
	want, err := exec.LookPath("bash")
	if err != nil {
		want = ""
	}
	if got := unixShells.lookup(); got != want {
		t.Fatalf("lookup printed %q, want the bash on PATH %q", got, want)
	}
}
