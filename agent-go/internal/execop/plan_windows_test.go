//go:build windows

package execop

import (
	"io/fs"
	"slices"
	"testing"
)

// The Windows shell search on a made-up machine: Git Bash under ProgramFiles, then ProgramFiles(x86), then
// `where bash.exe`, else NodeExecutionEnv's message naming what was searched.
func TestWindowsShellSearch(t *testing.T) {
	git64, git32 := `C:\PF\Git\bin\bash.exe`, `C:\PF86\Git\bin\bash.exe`
	env := []string{`ProgramFiles=C:\PF`, `ProgramFiles(x86)=C:\PF86`}
	cases := []struct {
		name   string
		files  []string
		where  string
		want   string
		failed bool
	}{
		{"Git Bash", []string{git64, git32}, "", git64, false},
		{"Git Bash (x86)", []string{git32}, "", git32, false},
		{"where bash.exe", []string{`C:\msys\bash.exe`}, `C:\msys\bash.exe`, `C:\msys\bash.exe`, false},
		{"none", nil, `C:\gone\bash.exe`, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeMachine{files: map[string]fs.FileMode{}, env: env}
			for _, path := range c.files {
				f.files[path] = 0o755
			}
			m := f.machine()
			m.findBash = func() string { return c.where }
			got, fail := chooseShell("", m)
			if c.failed {
				if fail == nil || fail.Code != "shell_unavailable" || fail.Message != gitBashNotFound([]string{git64, git32}) {
					t.Fatalf("got %q, %+v", got, fail)
				}
				return
			}
			if fail != nil || got != c.want {
				t.Fatalf("got %q, %+v; want %q", got, fail, c.want)
			}
		})
	}
}

// A batch file is refused by its name before the working directory is looked at (WIN10); then ENOTDIR; then the
// search, which takes PATH from the command's environment (any case) and tries .com and .exe.
func TestWindowsLocateProgram(t *testing.T) {
	f := &fakeMachine{files: map[string]fs.FileMode{`C:\work`: fs.ModeDir, `C:\file`: 0, `C:\tools\run.exe`: 0o755}}
	m := f.machine()
	dir, _ := m.stat(`C:\work`)
	file, _ := m.stat(`C:\file`)
	if _, fail := locateProgram("x.cmd. ", `C:\file`, file, nil, m); fail == nil || fail.Message != "spawn EINVAL" {
		t.Fatalf("batch file: %+v", fail)
	}
	if _, fail := locateProgram("run", `C:\file`, file, nil, m); fail == nil || fail.Message != "spawn ENOTDIR" {
		t.Fatalf("not a directory: %+v", fail)
	}
	path, fail := locateProgram("run", `C:\work`, dir, []envEntry{{key: "Path", value: `C:\nowhere;C:\tools`}}, m)
	if fail != nil || path != `C:\tools\run.exe` {
		t.Fatalf("got %q, %+v", path, fail)
	}
	if _, fail := locateProgram("run", `C:\work`, dir, nil, m); fail == nil || fail.Message != "spawn run ENOENT" {
		t.Fatalf("no PATH anywhere: %+v", fail)
	}
	if env := childEnv([]envEntry{{key: "b", value: "2"}, {key: "A", value: "1"}}, m); !slices.Equal(env, []string{"A=1", "b=2"}) {
		t.Fatalf("environment block %q", env)
	}
}
