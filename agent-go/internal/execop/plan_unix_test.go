//go:build unix

package execop

import (
	"io/fs"
	"slices"
	"testing"
)

// The plan of a string command and of an argv command, built without touching the real machine.
func TestPlanOnAMadeUpMachine(t *testing.T) {
	f := &fakeMachine{
		files: map[string]fs.FileMode{"/bin/bash": 0o755, "/work": fs.ModeDir | 0o755, "/tools/run": 0o755},
		env:   []string{"PATH=/tools", "HOME=/home/me"},
	}
	cmd := "echo hi"
	p, fail := planExec(&request{command: &cmd, cwd: "/work", inheritEnv: true,
		env: []envEntry{{key: "HOME", unset: true}, {key: "X", value: "1"}}}, f.machine())
	if fail != nil {
		t.Fatal(fail)
	}
	if p.shell != "/bin/bash" || p.program != "/bin/bash" || p.path != "/bin/bash" || p.dir != "/work" ||
		!slices.Equal(p.argv, []string{"/bin/bash", "-c", "echo hi"}) || p.stdin != nil ||
		!slices.Equal(p.env, []string{"PATH=/tools", "X=1"}) {
		t.Fatalf("plan %+v", p)
	}
	if want := []string{"/bin/bash", "/work"}; !slices.Equal(f.looked, want) {
		t.Fatalf("looked at %q, want %q", f.looked, want)
	}

	f.looked = nil
	p, fail = planExec(&request{argv: []string{"run", "a b"}, cwd: "/work", inheritEnv: true}, f.machine())
	if fail != nil {
		t.Fatal(fail)
	}
	if p.shell != "" || p.program != "run" || p.path != "/tools/run" || !slices.Equal(p.argv, []string{"run", "a b"}) {
		t.Fatalf("plan %+v", p)
	}
	if want := []string{"/work", "/tools/run"}; !slices.Equal(f.looked, want) {
		t.Fatalf("looked at %q, want %q", f.looked, want)
	}
}

// Legacy WSL bash takes the command on stdin; the check is made on every platform (the program search that
// follows fails here, as Node's would).
func TestPlanLegacyWSLBash(t *testing.T) {
	wsl := `C:\Windows\System32\bash.exe`
	f := &fakeMachine{files: map[string]fs.FileMode{wsl: 0o755}}
	cmd := "echo hi"
	p := &plan{}
	if fail := p.chooseProgram(&request{command: &cmd, shellPath: wsl}, f.machine()); fail != nil {
		t.Fatal(fail)
	}
	if !slices.Equal(p.argv, []string{wsl, "-s"}) || p.stdin == nil || *p.stdin != cmd {
		t.Fatalf("plan %+v", p)
	}
}

// Each failure wins over every later one, in NodeExecutionEnv's order.
func TestPlanFailureOrder(t *testing.T) {
	files := map[string]fs.FileMode{"/bin/bash": 0o755, "/work": fs.ModeDir, "/file": 0, "/tools/data": 0o644}
	cmd := "true"
	cases := []struct {
		name    string
		req     request
		message string
	}{
		{"shell before cwd", request{command: &cmd, shellPath: "/nope", cwd: "/missing"},
			"Custom shell path not found: /nope"},
		{"empty argv before cwd", request{argv: []string{}, cwd: "/missing"}, "Empty argv: no program to run"},
		{"cwd before argument validation", request{argv: []string{"a\x00"}, cwd: "/missing"},
			"Working directory does not exist: /missing\nCannot execute bash commands."},
		{"argument validation before ENOTDIR", request{argv: []string{""}, cwd: "/file"},
			"The argument 'file' cannot be empty. Received ''"},
		{"env validation before ENOTDIR", request{argv: []string{"x"}, cwd: "/file",
			env: []envEntry{{key: "K", value: "a\x00"}}},
			`The property 'options.env['K']' must be a string without null bytes. Received 'a\x00'`},
		{"ENOTDIR before the search", request{argv: []string{"missing"}, cwd: "/file"}, "spawn ENOTDIR"},
		{"a found file that cannot run", request{argv: []string{"data"}, cwd: "/work",
			env: []envEntry{{key: "PATH", value: "/nowhere:/tools"}}}, "spawn data EACCES"},
		{"nothing found", request{argv: []string{"missing"}, cwd: "/work"}, "spawn missing ENOENT"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeMachine{files: files}
			_, fail := planExec(&c.req, f.machine())
			if fail == nil || fail.Message != c.message {
				t.Fatalf("got %+v, want %q", fail, c.message)
			}
		})
	}
}
