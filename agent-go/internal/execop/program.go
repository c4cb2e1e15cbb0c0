package execop

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/outpost-dev/outpost/agent-go/internal/nodefmt"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
	"github.com/outpost-dev/outpost/agent-go/internal/reaper"
)

// shellLookupTimeout bounds `which bash` / `where bash.exe`.
const shellLookupTimeout = 5 * time.Second

// spawnSpec is a command ready to start.
type spawnSpec struct {
	// file is the program as Node's spawn receives it: argv[0] of the child and the name in spawn errors.
	file string
	// args follow argv[0].
	args []string
	dir  string
	env  []envEntry
	// stdin, when set, is written to the child's stdin, which is then closed (legacy WSL bash reads the
	// command there); otherwise stdin is the null device.
	stdin *string
}

// prepare selects the program and checks the working directory in NodeExecutionEnv's order: the shell (or
// the argv check) first, then the directory, then Node's own argument validation.
func (r *Runner) prepare(req *request) (*spawnSpec, *proto.Failure) {
	spec := &spawnSpec{dir: req.cwd}
	if req.command != nil {
		shell, fail := selectShell(req.shellPath)
		if fail != nil {
			return nil, fail
		}
		spec.file = shell
		if isLegacyWSLBash(shell, os.Getenv("SystemRoot")) {
			text := *req.command
			spec.args, spec.stdin = []string{"-s"}, &text
		} else {
			spec.args = []string{"-c", *req.command}
		}
	} else {
		if len(req.argv) == 0 {
			return nil, spawnError("Empty argv: no program to run")
		}
		spec.file, spec.args = req.argv[0], req.argv[1:]
	}
	if _, err := os.Stat(req.cwd); err != nil {
		return nil, spawnError("Working directory does not exist: " + req.cwd + "\nCannot execute bash commands.")
	}
	spec.env = mergeEnv(req.inheritEnv, os.Environ(), req.env)
	if fail := validateArguments(spec); fail != nil {
		return nil, fail
	}
	return spec, nil
}

// customShell checks a configured shell path: it must exist (following links).
func customShell(path string) (string, *proto.Failure) {
	if _, err := os.Stat(path); err != nil {
		return "", &proto.Failure{Code: "shell_unavailable", Message: "Custom shell path not found: " + path}
	}
	return path, nil
}

// firstLineOf runs a lookup command (which/where) and returns the first line of its trimmed output when it
// exits with status 0 within the lookup timeout.
func firstLineOf(name string, args ...string) string {
	ctx, cancel := context.WithTimeout(context.Background(), shellLookupTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	configureLookup(cmd)
	var buf strings.Builder
	cmd.Stdout = &buf
	// Registered as the agent's own child, so no orphan sweep takes it for an adopted process.
	pid, err := reaper.Spawn(func() (int, error) {
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	})
	if err != nil {
		return ""
	}
	err = cmd.Wait()
	reaper.Disown(pid)
	if err != nil {
		return ""
	}
	out := buf.String()
	text := strings.TrimSpace(string(out))
	line, _, _ := strings.Cut(text, "\n")
	return strings.TrimSuffix(line, "\r")
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func spawnError(message string) *proto.Failure {
	return &proto.Failure{Code: "spawn_error", Message: message}
}

// spawnFailure builds Node's spawn error for a libuv code: for the codes Node reports asynchronously the
// message names the program ("spawn /bin/bash ENOENT"); the others are thrown as "spawn <CODE>".
func spawnFailure(file, code string) *proto.Failure {
	switch code {
	case "EACCES", "EAGAIN", "EMFILE", "ENFILE", "ENOENT":
		return spawnError("spawn " + file + " " + code)
	default:
		return spawnError("spawn " + code)
	}
}

// validateArguments repeats the checks Node's spawn makes before starting anything.
func validateArguments(spec *spawnSpec) *proto.Failure {
	if spec.file == "" {
		return spawnError("The argument 'file' cannot be empty. Received ''")
	}
	if strings.ContainsRune(spec.file, 0) {
		return nulError("The argument 'file'", spec.file)
	}
	// Node's args array starts with the program itself.
	for i, arg := range spec.args {
		if strings.ContainsRune(arg, 0) {
			return nulError("The argument 'args["+strconv.Itoa(i+1)+"]'", arg)
		}
	}
	for _, e := range spec.env {
		if strings.ContainsRune(e.key, 0) || strings.ContainsRune(e.value, 0) {
			return nulError("The property 'options.env["+nodefmt.InspectString(e.key)+"]'", e.value)
		}
	}
	return nil
}

func nulError(subject, value string) *proto.Failure {
	return spawnError(subject + " must be a string without null bytes. Received " + nodefmt.InspectString(value))
}

// isLegacyWSLBash reports whether path is Windows' legacy WSL launcher (%SystemRoot%\System32\bash.exe or
// Sysnative\bash.exe), which takes the command on stdin (`bash -s`). Like NodeExecutionEnv the check is made
// on every platform; systemRoot is the agent's SystemRoot variable ("" when unset).
func isLegacyWSLBash(path, systemRoot string) bool {
	normalized := strings.ToLower(normalizeWin32(path))
	if systemRoot != "" {
		if len(systemRoot) < 3 || !isDriveLetter(systemRoot[0]) || systemRoot[1] != ':' ||
			systemRoot[2] != '\\' && systemRoot[2] != '/' {
			return false
		}
		root := strings.ToLower(normalizeWin32(systemRoot))
		root = strings.TrimSuffix(root, `\`)
		return normalized == root+`\system32\bash.exe` || normalized == root+`\sysnative\bash.exe`
	}
	if len(normalized) < 3 || !isDriveLetter(normalized[0]) || normalized[1] != ':' {
		return false
	}
	rest := normalized[2:]
	return rest == `\windows\system32\bash.exe` || rest == `\windows\sysnative\bash.exe`
}

func isDriveLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// normalizeWin32 is a small path.win32.normalize: forward slashes become backslashes, repeated separators
// collapse, and "." and ".." segments are resolved (never above the root).
func normalizeWin32(p string) string {
	p = strings.ReplaceAll(p, "/", `\`)
	prefix := ""
	if len(p) >= 2 && isDriveLetter(p[0]) && p[1] == ':' {
		prefix, p = p[:2], p[2:]
	}
	absolute := strings.HasPrefix(p, `\`)
	var parts []string
	for _, part := range strings.Split(p, `\`) {
		switch part {
		case "", ".":
		case "..":
			if len(parts) > 0 && parts[len(parts)-1] != ".." {
				parts = parts[:len(parts)-1]
			} else if !absolute {
				parts = append(parts, part)
			}
		default:
			parts = append(parts, part)
		}
	}
	out := strings.Join(parts, `\`)
	if absolute {
		out = `\` + out
	}
	return prefix + out
}
