//go:build unix

package execop

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

func TestStreamsAndExitCodes(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name    string
		command string
		code    int
		stdout  string
		stderr  string
	}{
		{"streams apart", "printf out; printf err >&2; printf more", 0, "outmore", "err"},
		{"exit status", "exit 7", 7, "", ""},
		{"SIGINT", "kill -INT $$", 130, "", ""},
		{"SIGKILL", "kill -9 $$", 137, "", ""},
		{"SIGTERM", "kill -TERM $$", 143, "", ""},
		{"option-like command is not protected by --", "-x", 2, "", ""},
		{"cwd is used", "pwd", 0, dir + "\n", ""},
		{"stdin is the null device", "cat; echo done", 0, "done\n", ""},
		{"dollar zero is the shell path", "printf %s \"$0\"", 0, "/bin/bash", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			events := newFakeEvents()
			out := run(t, New(dir), shell(c.command, dir), nil, events)
			if got := out.exitCode(t); got != c.code {
				t.Fatalf("exit code %d, want %d", got, c.code)
			}
			if c.code != 2 {
				if got := events.text("stdout"); got != c.stdout {
					t.Errorf("stdout %q, want %q", got, c.stdout)
				}
				if got := events.text("stderr"); got != c.stderr {
					t.Errorf("stderr %q, want %q", got, c.stderr)
				}
			}
			if len(out.result) != 1 {
				t.Errorf("result has extra keys: %v", out.result)
			}
		})
	}
}

func TestArgvPassesHostileArgumentsUnparsed(t *testing.T) {
	dir := t.TempDir()
	args := []string{"%s|", "a b", "$(touch pwned)", "'q'", `"dq"`, "-c", "", "--", "*", "\\n", "ü€😀"}
	events := newFakeEvents()
	out := run(t, New(dir), argv(dir, append([]string{"printf"}, args...)...), nil, events)
	if out.exitCode(t) != 0 {
		t.Fatal("printf failed")
	}
	want := strings.Join(args[1:], "|") + "|"
	if got := events.text("stdout"); got != want {
		t.Fatalf("stdout %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Fatal("an argument was run through a shell")
	}
}

func TestShellSelection(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "my-shell")
	if err := os.Symlink("/bin/sh", link); err != nil {
		t.Fatal(err)
	}
	notExecutable := filepath.Join(dir, "not-executable")
	writeFile(t, notExecutable, "echo hi\n", 0o644)
	cases := []struct {
		name      string
		shellPath string
		code      string
		message   string
		stdout    string
	}{
		{"missing custom shell", filepath.Join(dir, "nope"), "shell_unavailable",
			"Custom shell path not found: " + filepath.Join(dir, "nope"), ""},
		{"dangling link", filepath.Join(dir, "dangling"), "shell_unavailable",
			"Custom shell path not found: " + filepath.Join(dir, "dangling"), ""},
		{"custom shell through a link", link, "", "", link},
		{"existing but not executable", notExecutable, "spawn_error", "spawn " + notExecutable + " EACCES", ""},
	}
	if err := os.Symlink(filepath.Join(dir, "missing-target"), filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := shell(`printf %s "$0"`, dir)
			args["shellPath"] = c.shellPath
			events := newFakeEvents()
			out := run(t, New(dir), args, nil, events)
			if c.code == "" {
				if out.exitCode(t) != 0 || events.text("stdout") != c.stdout {
					t.Fatalf("got %v %q", out.result, events.text("stdout"))
				}
				return
			}
			if out.code(t) != c.code || out.failure.Message != c.message {
				t.Fatalf("got %s %q, want %s %q", out.failure.Code, out.failure.Message, c.code, c.message)
			}
		})
	}
	// Shell resolution happens before the cwd check.
	args := shell("true", filepath.Join(dir, "no-such-dir"))
	args["shellPath"] = filepath.Join(dir, "nope")
	if out := run(t, New(dir), args, nil, nil); out.code(t) != "shell_unavailable" {
		t.Fatalf("got %s", out.failure.Code)
	}
}

func TestWorkingDirectoryChecks(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	writeFile(t, file, "", 0o644)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	notFound := "Working directory does not exist: " + missing + "\nCannot execute bash commands."
	cases := []struct {
		name    string
		args    map[string]any
		code    string
		message string
	}{
		{"missing, shell", shell("true", missing), "spawn_error", notFound},
		{"missing, argv", argv(missing, "true"), "spawn_error", notFound},
		{"a file, shell", shell("true", file), "spawn_error", "spawn ENOTDIR"},
		{"a file, argv", argv(file, "true"), "spawn_error", "spawn ENOTDIR"},
		{"link to a directory", shell("true", link), "", ""},
		{"empty argv", argv(missing), "spawn_error", "Empty argv: no program to run"},
		{"empty program", argv(dir, ""), "spawn_error", "The argument 'file' cannot be empty. Received ''"},
		{"NUL in an argument", argv(dir, "echo", "a\x00b"), "spawn_error",
			`The argument 'args[1]' must be a string without null bytes. Received 'a\x00b'`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := run(t, New(dir), c.args, nil, nil)
			if c.code == "" {
				if code := out.exitCode(t); code != 0 {
					t.Fatalf("exit code %d", code)
				}
				return
			}
			if out.code(t) != c.code || out.failure.Message != c.message {
				t.Fatalf("got %s %q, want %s %q", out.failure.Code, out.failure.Message, c.code, c.message)
			}
		})
	}
}

func TestMalformedRequests(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name    string
		args    string
		message string
	}{
		{"nothing", `{}`, "exec needs command or argv"},
		{"no args", ``, "exec needs command or argv"},
		{"null command and argv", `{"command":null,"argv":null,"cwd":"/"}`, "exec needs command or argv"},
		{"no cwd", `{"command":"true"}`, "exec needs cwd"},
		{"argv of numbers", `{"argv":[1],"cwd":"/"}`, ""},
		{"command not a string", `{"command":5,"cwd":"/"}`, ""},
		{"env not an object", `{"command":"true","cwd":"/","env":"x"}`, ""},
		{"inheritEnv not a bool", `{"command":"true","cwd":"/","inheritEnv":"yes"}`, ""},
		{"timeout not a number", `{"command":"true","cwd":"/","timeoutMs":"5"}`, ""},
		{"timeout zero", `{"command":"true","cwd":"/","timeoutMs":0}`, ""},
		{"spill not numbers", `{"command":"true","cwd":"/","spill":{"afterBytes":"1"}}`, ""},
		{"window not numbers", `{"command":"true","cwd":"/","window":{"maxBytes":"1","maxLines":1,"minIntervalMs":1,"bytesPerSecond":1}}`, ""},
		{"not JSON", `{"command":`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			call := &proto.Call{Op: "exec", Args: []byte(c.args), Control: proto.NewControl(), Events: newFakeEvents()}
			_, err := New(dir).Handle(call)
			failure, ok := err.(*proto.Failure)
			if !ok || failure.Code != "EINVAL" {
				t.Fatalf("got %v, want EINVAL", err)
			}
			if c.message != "" && failure.Message != c.message {
				t.Fatalf("message %q, want %q", failure.Message, c.message)
			}
		})
	}
}

func TestEnvironment(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(bin, "hello"), "#!/bin/sh\necho hello from PATH\n", 0o755)
	writeFile(t, filepath.Join(dir, "noshebang"), "echo no shebang\n", 0o755)
	writeFile(t, filepath.Join(dir, "plain"), "echo x\n", 0o644)
	t.Setenv("OUTPOST_TEST_INHERITED", "inherited")
	t.Setenv("PWD", "/agent/pwd")
	cases := []struct {
		name    string
		argv    []string
		inherit bool
		env     map[string]any
		stdout  string
		failure string
	}{
		{"only the request env", []string{"/usr/bin/env"}, false, map[string]any{"A": "1", "B": ""}, "A=1\nB=\n", ""},
		{"empty env", []string{"/usr/bin/env"}, false, map[string]any{}, "", ""},
		{"non-string values are dropped", []string{"/usr/bin/env"}, false,
			map[string]any{"N": 1, "T": true, "O": map[string]any{}, "S": "s"}, "S=s\n", ""},
		{"no PATH: default search path", []string{"env"}, false, map[string]any{"X": "y"}, "X=y\n", ""},
		{"command PATH, not the agent's", []string{"env"}, true, map[string]any{"PATH": "/nonexistent"}, "",
			"spawn env ENOENT"},
		{"program found on the command PATH", []string{"hello"}, false, map[string]any{"PATH": bin},
			"hello from PATH\n", ""},
		{"empty PATH entry is the cwd", []string{"noshebang"}, false, map[string]any{"PATH": "/nonexistent:"},
			"no shebang\n", ""},
		{"relative program with a slash uses the cwd", []string{"./noshebang"}, false, map[string]any{},
			"no shebang\n", ""},
		{"not executable", []string{"./plain"}, false, map[string]any{}, "", "spawn ./plain EACCES"},
		{"not executable on PATH", []string{"plain"}, false, map[string]any{"PATH": dir}, "", "spawn plain EACCES"},
		{"missing program", []string{"pi-durable-conformance-missing-program"}, true, map[string]any{}, "",
			"spawn pi-durable-conformance-missing-program ENOENT"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := argv(dir, c.argv...)
			args["inheritEnv"], args["env"] = c.inherit, c.env
			events := newFakeEvents()
			out := run(t, New(dir), args, nil, events)
			if c.failure != "" {
				if out.code(t) != "spawn_error" || out.failure.Message != c.failure {
					t.Fatalf("got %s %q, want %q", out.failure.Code, out.failure.Message, c.failure)
				}
				return
			}
			if out.exitCode(t) != 0 || events.text("stdout") != c.stdout {
				t.Fatalf("exit %v stdout %q stderr %q, want %q", out.result, events.text("stdout"),
					events.text("stderr"), c.stdout)
			}
		})
	}
	t.Run("inherited, overlaid, PWD untouched", func(t *testing.T) {
		args := shell(`printf '%s|%s|%s' "$OUTPOST_TEST_INHERITED" "$OVERLAY" "$PWD"`, dir)
		args["env"] = map[string]any{"OVERLAY": "over"}
		events := newFakeEvents()
		// bash itself sets PWD only when it is missing or wrong; a shell-free check follows.
		run(t, New(dir), args, nil, events)
		if got := events.text("stdout"); !strings.HasPrefix(got, "inherited|over|") {
			t.Fatalf("got %q", got)
		}
		events = newFakeEvents()
		run(t, New(dir), map[string]any{"argv": []string{"/usr/bin/env"}, "cwd": dir, "env": map[string]any{}}, nil, events)
		if !strings.Contains(events.text("stdout"), "\nPWD=/agent/pwd\n") {
			t.Fatalf("PWD changed: %q", events.text("stdout"))
		}
	})
	t.Run("inheritEnv false drops PWD", func(t *testing.T) {
		events := newFakeEvents()
		args := argv(dir, "/usr/bin/env")
		args["inheritEnv"] = false
		run(t, New(dir), args, nil, events)
		if events.text("stdout") != "" {
			t.Fatalf("got %q", events.text("stdout"))
		}
	})
}

func TestMergeEnv(t *testing.T) {
	base := []string{"A=1", "B=2", "A=3", "=C:=C:\\x", "NOEQUALS", "E=x=y"}
	got := mergeEnv(true, base, []envEntry{{key: "B"}, {key: "Z", value: "z"}, {key: "E", unset: true}, {key: "Q", unset: true}})
	want := []envEntry{{key: "A", value: "3"}, {key: "B"}, {key: "=C:", value: "C:\\x"}, {key: "Z", value: "z"}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if env := envStrings(mergeEnv(false, base, nil)); env == nil || len(env) != 0 {
		t.Fatalf("an empty environment must be an empty, non-nil list: %#v", env)
	}
}

func TestParseEnvKeepsOrderAndLastValue(t *testing.T) {
	got, err := parseEnv([]byte(`{"b":"1","a":"2","b":"3","n":null,"x":["y"]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []envEntry{{key: "b", value: "3"}, {key: "a", value: "2"}, {key: "n", unset: true}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("got %v", got)
	}
}

func TestTimeout(t *testing.T) {
	dir := t.TempDir()
	for _, ms := range []float64{150, 0.5} {
		args := shell("sleep 5", dir)
		args["timeoutMs"] = ms
		out := run(t, New(dir), args, nil, nil)
		if out.code(t) != "timeout" || out.failure.Message != "timeout" || out.failure.Extra != nil {
			t.Fatalf("got %+v", out.failure)
		}
		if out.elapsed > 2*time.Second {
			t.Fatalf("timeout took %v", out.elapsed)
		}
	}
}

func TestAbortAndKill(t *testing.T) {
	dir := t.TempDir()
	t.Run("abort before attach never spawns", func(t *testing.T) {
		control := proto.NewControl()
		control.Abort()
		out := run(t, New(dir), shell("touch spawned", dir), control, nil)
		if out.code(t) != "aborted" || out.failure.Message != "aborted" {
			t.Fatalf("got %+v", out.failure)
		}
		if _, err := os.Stat(filepath.Join(dir, "spawned")); err == nil {
			t.Fatal("the command ran")
		}
	})
	t.Run("abort right after start", func(t *testing.T) {
		control := proto.NewControl()
		events := newFakeEvents()
		done := runAsync(t, New(dir), shell("echo started; sleep 5", dir), control, events)
		waitFirst(t, events)
		control.Abort()
		if out := wait(t, done, 2*time.Second); out.code(t) != "aborted" {
			t.Fatalf("got %s", out.failure.Code)
		}
	})
	t.Run("kill settles with 137", func(t *testing.T) {
		control := proto.NewControl()
		events := newFakeEvents()
		done := runAsync(t, New(dir), shell("echo started; sleep 5", dir), control, events)
		waitFirst(t, events)
		control.Kill()
		if out := wait(t, done, 2*time.Second); out.exitCode(t) != 137 {
			t.Fatalf("got %v", out.result)
		}
	})
	t.Run("kill before the loop kills right after spawn", func(t *testing.T) {
		control := proto.NewControl()
		control.Kill()
		out := run(t, New(dir), shell("sleep 5", dir), control, nil)
		if out.exitCode(t) != 137 || out.elapsed > 2*time.Second {
			t.Fatalf("got %v after %v", out.result, out.elapsed)
		}
	})
	t.Run("KillAll kills every group", func(t *testing.T) {
		r := New(dir)
		var dones []<-chan outcome
		var all []*fakeEvents
		for range 2 {
			events := newFakeEvents()
			all = append(all, events)
			dones = append(dones, runAsync(t, r, shell("echo started; sleep 5 & sleep 5", dir), nil, events))
		}
		for _, events := range all {
			waitFirst(t, events)
		}
		r.KillAll()
		for _, done := range dones {
			if out := wait(t, done, 2*time.Second); out.exitCode(t) != 137 {
				t.Fatalf("got %v", out.result)
			}
		}
		if len(r.running) != 0 {
			t.Fatal("settled commands still tracked")
		}
	})
}

func TestPostExitGrace(t *testing.T) {
	dir := t.TempDir()
	t.Run("a descendant holding the pipes does not hold exec", func(t *testing.T) {
		events := newFakeEvents()
		// The bound is far below the descendant's 30 s, and loose enough for a loaded CI machine.
		out := run(t, New(dir), shell("sleep 30 & echo $!", dir), nil, events)
		if out.exitCode(t) != 0 || out.elapsed > 5*time.Second {
			t.Fatalf("got %v after %v", out.result, out.elapsed)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(events.text("stdout")))
		if err != nil {
			t.Fatalf("stdout %q", events.text("stdout"))
		}
		// The descendant was not killed, and its pipes are closed: its next write fails.
		if err := unix.Kill(pid, 0); err != nil {
			t.Fatalf("descendant gone: %v", err)
		}
		_ = unix.Kill(pid, unix.SIGKILL)
	})
	// The pauses are bash's own `read -t` on an empty FIFO, not a `sleep` process per line: forking one took more
	// than the 100 ms grace on a loaded machine and ended the command early (as it would under Node).
	writer := "mkfifo pause; (exec 9<>pause; for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do " +
		"echo $i; read -t 0.02 -u 9; done) & exit "
	t.Run("output keeps the grace open", func(t *testing.T) {
		events := newFakeEvents()
		out := run(t, New(dir), shell(writer+"3", dir), nil, events)
		if out.exitCode(t) != 3 || !strings.HasSuffix(events.text("stdout"), "\n20\n") {
			t.Fatalf("got %v %q", out.result, events.text("stdout"))
		}
	})
	// A descendant that writes until it is killed: the command can only settle through the group kill, however
	// slowly a loaded machine runs the loop.
	endless := "(while :; do echo x; sleep 0.02; done) & exit "
	t.Run("timeout during the grace", func(t *testing.T) {
		args := shell(endless+"0", dir)
		args["timeoutMs"] = 300
		out := run(t, New(dir), args, nil, nil)
		if out.code(t) != "timeout" || out.elapsed > 5*time.Second {
			t.Fatalf("got %+v after %v", out.failure, out.elapsed)
		}
	})
	t.Run("abort during the grace", func(t *testing.T) {
		control := proto.NewControl()
		events := newFakeEvents()
		done := runAsync(t, New(dir), shell(endless+"0", dir), control, events)
		waitFirst(t, events)
		time.Sleep(100 * time.Millisecond)
		control.Abort()
		if out := wait(t, done, 5*time.Second); out.code(t) != "aborted" {
			t.Fatalf("got %v", out.failure)
		}
	})
	t.Run("kill during the grace keeps the exit code", func(t *testing.T) {
		control := proto.NewControl()
		events := newFakeEvents()
		done := runAsync(t, New(dir), shell(endless+"5", dir), control, events)
		waitFirst(t, events)
		time.Sleep(100 * time.Millisecond)
		control.Kill()
		if out := wait(t, done, 5*time.Second); out.exitCode(t) != 5 {
			t.Fatalf("got %v", out.result)
		}
	})
}

func TestDecodingPerStream(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name    string
		command string
		stdout  string
		stderr  string
	}{
		{"character split across writes", `printf '\342\202'; sleep 0.05; printf '\254'`, "€", ""},
		{"split survives interleaving", `printf '\342'; printf 'e' >&2; sleep 0.05; printf '\202\254'`, "€", "e"},
		{"leading BOM dropped per stream", `printf '\357\273\277a'; printf '\357\273\277b' >&2`, "a", "b"},
		{"later FEFF kept", `printf 'a\357\273\277'`, "a\uFEFF", ""},
		{"incomplete tail flushed", `printf 'x\342\202'`, "x\uFFFD", ""},
		{"only a BOM emits nothing", `printf '\357\273\277'`, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			events := newFakeEvents()
			run(t, New(dir), shell(c.command, dir), nil, events).exitCode(t)
			if events.text("stdout") != c.stdout || events.text("stderr") != c.stderr {
				t.Fatalf("got %q / %q", events.text("stdout"), events.text("stderr"))
			}
			for _, e := range events.all() {
				if e.text == "" {
					t.Fatal("empty event")
				}
			}
		})
	}
}

func TestSpill(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name       string
		command    string
		afterBytes any
		afterLines any
		spills     bool
	}{
		{"exactly afterBytes does not spill", "printf 12345", 5, 100, false},
		{"one byte more spills", "printf 123456", 5, 100, true},
		{"short output", "printf short", 100, 10, false},
		{"zero thresholds spill on the first chunk", "printf x", 0, 0, true},
		{"lines: complete lines within", `printf 'a\nb\n'`, 100, 2, false},
		{"lines: a partial line counts", `printf 'a\nb\nc'`, 100, 2, true},
		{"lines across chunks", `printf 'a'; sleep 0.05; printf 'b\n'`, 100, 1, false},
		{"partial line after a newline chunk", `printf 'a\n'; sleep 0.05; printf 'b'`, 100, 1, true},
		{"missing afterLines never triggers", "printf abc", 5, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := shell(c.command, dir)
			limits := map[string]any{"afterBytes": c.afterBytes}
			if c.afterLines != nil {
				limits["afterLines"] = c.afterLines
			}
			args["spill"] = limits
			out := run(t, New(dir), args, nil, nil)
			out.exitCode(t)
			path, has := out.result["spillPath"].(string)
			if has != c.spills {
				t.Fatalf("spillPath %q, want spill %v", path, c.spills)
			}
			if !has {
				return
			}
			if filepath.Dir(filepath.Dir(path)) != dir || !strings.HasPrefix(filepath.Base(filepath.Dir(path)), "tmp-") ||
				len(filepath.Base(filepath.Dir(path))) != 10 || !strings.HasPrefix(filepath.Base(path), "pi-output-") ||
				!strings.HasSuffix(path, ".log") || len(filepath.Base(path)) != len("pi-output-")+36+len(".log") {
				t.Fatalf("bad spill path %s", path)
			}
		})
	}
}

func TestSpillFileIsRawAndComplete(t *testing.T) {
	dir := t.TempDir()
	args := shell(`printf '\357\273\277f\200\000o'; head -c 500000 /dev/zero | tr '\0' 'z'`, dir)
	args["spill"] = map[string]any{"afterBytes": 0, "afterLines": 0}
	events := newFakeEvents()
	out := run(t, New(dir), args, nil, events)
	out.exitCode(t)
	data, err := os.ReadFile(out.result["spillPath"].(string))
	if err != nil {
		t.Fatal(err)
	}
	want := append([]byte("\xEF\xBB\xBFf\x80\x00o"), bytes.Repeat([]byte("z"), 500000)...)
	if !bytes.Equal(data, want) {
		t.Fatalf("spill file has %d bytes, want %d (prefix %q)", len(data), len(want), data[:min(len(data), 10)])
	}
	if got := events.text("stdout"); got != "f\uFFFD\x00o"+strings.Repeat("z", 500000) {
		t.Fatalf("decoded output differs (%d bytes)", len(got))
	}
}

func TestSpillWithTimeoutAndFailure(t *testing.T) {
	dir := t.TempDir()
	t.Run("timeout carries spillPath", func(t *testing.T) {
		args := shell("printf abc; sleep 5", dir)
		args["spill"] = map[string]any{"afterBytes": 1, "afterLines": 100}
		args["timeoutMs"] = 300
		out := run(t, New(dir), args, nil, nil)
		path, _ := out.failure.Extra["spillPath"].(string)
		if out.code(t) != "timeout" || path == "" {
			t.Fatalf("got %+v", out.failure)
		}
		if data, err := os.ReadFile(path); err != nil || string(data) != "abc" {
			t.Fatalf("spill %q %v", data, err)
		}
	})
	t.Run("a failed spill kills and reports unknown", func(t *testing.T) {
		missing := filepath.Join(dir, "missing")
		args := shell("printf abc; sleep 5", dir)
		args["spill"] = map[string]any{"afterBytes": 1, "afterLines": 100}
		out := run(t, New(missing), args, nil, nil)
		want := "Failed to preserve complete shell output: ENOENT: no such file or directory, mkdtemp '" +
			filepath.Join(missing, "tmp-") + "XXXXXX'"
		if out.code(t) != "unknown" || out.failure.Message != want || out.failure.Extra != nil {
			t.Fatalf("got %+v", out.failure)
		}
		if out.elapsed > 2*time.Second {
			t.Fatalf("the group was not killed: %v", out.elapsed)
		}
	})
}

func TestBackpressureSlowsTheCommand(t *testing.T) {
	dir := t.TempDir()
	events := newFakeEvents()
	events.gate = make(chan struct{})
	done := runAsync(t, New(dir), shell("head -c 2000000 /dev/zero; echo finished >&2", dir), nil, events)
	select {
	case out := <-done:
		t.Fatalf("command finished while output was blocked: %+v", out)
	case <-time.After(300 * time.Millisecond):
	}
	close(events.gate)
	out := wait(t, done, 5*time.Second)
	if out.exitCode(t) != 0 || len(events.text("stdout")) != 2000000 || events.text("stderr") != "finished\n" {
		t.Fatalf("got %d bytes, stderr %q", len(events.text("stdout")), events.text("stderr"))
	}
}

func TestWindow(t *testing.T) {
	dir := t.TempDir()
	args := shell("yes | head -c 5000000", dir)
	args["window"] = map[string]any{"maxBytes": 1000, "maxLines": 20, "minIntervalMs": 20, "bytesPerSecond": 1_000_000}
	events := newFakeEvents()
	out := run(t, New(dir), args, nil, events)
	out.exitCode(t)
	var sent, total, newlines int64
	var kept string
	checkKept := func() {
		// The text after an omission, up to the next one, is more than the window.
		if len(kept) <= 1000 && strings.Count(kept, "\n") <= 20 {
			t.Fatalf("the text after an omission is within the window: %q", kept)
		}
	}
	skips := 0
	for _, e := range events.all() {
		sent += int64(len(e.text))
		total += int64(len(e.text))
		newlines += int64(strings.Count(e.text, "\n"))
		if e.skipped != nil {
			if skips > 0 {
				checkKept()
			}
			skips++
			total += e.skipped.Bytes
			newlines += e.skipped.Newlines
			kept = ""
		}
		kept += e.text
	}
	checkKept()
	if total != 5_000_000 || newlines != 2_500_000 {
		t.Fatalf("counted %d bytes and %d newlines", total, newlines)
	}
	if sent >= 500_000 {
		t.Fatalf("transferred %d bytes", sent)
	}
	if !strings.HasSuffix(kept, strings.Repeat("y\n", 20)) {
		t.Fatalf("kept tail %q", kept[max(0, len(kept)-60):])
	}
}

func TestWindowPacing(t *testing.T) {
	dir := t.TempDir()
	args := shell("for i in $(seq 1 30); do echo line $i; sleep 0.01; done", dir)
	args["window"] = map[string]any{"maxBytes": 10000, "maxLines": 1000, "minIntervalMs": 150, "bytesPerSecond": 1e9}
	events := newFakeEvents()
	out := run(t, New(dir), args, nil, events)
	out.exitCode(t)
	var want strings.Builder
	for i := 1; i <= 30; i++ {
		want.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	if events.text("stdout") != want.String() {
		t.Fatalf("got %q", events.text("stdout"))
	}
	// At most one delivery per 150 ms while the command runs (about 300 ms, longer on a loaded machine), plus the
	// final one when it settles.
	if n, limit := len(events.all()), int(out.elapsed/(150*time.Millisecond))+2; n > limit {
		t.Fatalf("%d deliveries in %v, at most %d expected", n, out.elapsed, limit)
	}
}

func TestWindowMissingFieldMeansNoWindow(t *testing.T) {
	dir := t.TempDir()
	args := shell("yes | head -c 100000", dir)
	args["window"] = map[string]any{"maxBytes": 10, "maxLines": 1, "minIntervalMs": 20}
	events := newFakeEvents()
	run(t, New(dir), args, nil, events).exitCode(t)
	if len(events.text("stdout")) != 100000 {
		t.Fatalf("got %d bytes", len(events.text("stdout")))
	}
}
