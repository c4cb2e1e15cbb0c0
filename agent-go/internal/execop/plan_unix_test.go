//go:build unix

package execop

import (
	"io/fs"
	"os"
	"slices"
	"testing"
	"time"
)

// fakeFile is a file of a made-up machine.
type fakeFile struct {
	name string
	mode fs.FileMode
}

func (f fakeFile) Name() string       { return f.name }
func (f fakeFile) Size() int64        { return 0 }
func (f fakeFile) Mode() fs.FileMode  { return f.mode }
func (f fakeFile) ModTime() time.Time { return time.Time{} }
func (f fakeFile) IsDir() bool        { return f.mode.IsDir() }
func (f fakeFile) Sys() any           { return nil }

// fakeMachine is a machine made of files (path → mode; executable when any x bit is set) and an environment;
// it records every path looked at, so a test sees that planning looks nowhere else.
type fakeMachine struct {
	files  map[string]fs.FileMode
	env    []string
	looked []string
}

func (f *fakeMachine) machine() machine {
	return machine{
		environ: func() []string { return f.env },
		getenv: func(key string) (string, bool) {
			for _, kv := range f.env {
				if len(kv) > len(key) && kv[:len(key)] == key && kv[len(key)] == '=' {
					return kv[len(key)+1:], true
				}
			}
			return "", false
		},
		stat: func(path string) (fs.FileInfo, error) {
			f.looked = append(f.looked, path)
			mode, ok := f.files[path]
			if !ok {
				return nil, &fs.PathError{Op: "stat", Path: path, Err: os.ErrNotExist}
			}
			return fakeFile{name: path, mode: mode}, nil
		},
		canExecute: func(path string) bool { return f.files[path]&0o111 != 0 },
		findBash:   func() string { return "" },
	}
}

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
