//go:build windows

package execop

import (
	"io/fs"
	"path/filepath"

	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// The Windows rules of planning: NodeExecutionEnv's Git Bash search, libuv's program search and environment
// block (the string rules themselves are in winrules.go).

// selectShell picks the shell for a string command when none is configured: Git Bash, `where bash.exe`.
func selectShell(m machine) (string, *proto.Failure) {
	var candidates []string
	for _, variable := range []string{"ProgramFiles", "ProgramFiles(x86)"} {
		if dir := m.variable(variable); dir != "" {
			candidates = append(candidates, filepath.Join(dir, "Git", "bin", "bash.exe"))
		}
	}
	for _, candidate := range candidates {
		if m.exists(candidate) {
			return candidate, nil
		}
	}
	if found := m.findBash(); found != "" && m.exists(found) {
		return found, nil
	}
	return "", &proto.Failure{Code: "shell_unavailable", Message: gitBashNotFound(candidates)}
}

// locateProgram finds the file to execute, failing as Node and libuv do: a batch file is refused by the name
// it is given, before any lookup, naming no program (WIN10); a working directory that is not a directory is
// ENOTDIR; then the program is searched like libuv's search_path.
func locateProgram(program, cwd string, cwdInfo fs.FileInfo, env []envEntry, m machine) (string, *proto.Failure) {
	if isBatchFile(program) {
		return "", spawnError("spawn EINVAL")
	}
	if !cwdInfo.IsDir() {
		return "", spawnFailure(program, "ENOTDIR")
	}
	search, ok := lookupEnv(env, "PATH", true)
	if !ok {
		search = m.variable("PATH")
	}
	_, skipCwd := m.getenv("NoDefaultCurrentDirectoryInExePath")
	path, found := searchWindowsPath(program, cwd, search, skipCwd, func(p string) bool {
		info, err := m.stat(p)
		return err == nil && !info.IsDir()
	})
	if !found {
		return "", spawnFailure(program, "ENOENT")
	}
	return path, nil
}

// childEnv is libuv's environment block: sorted, case-duplicates dropped, required variables added.
func childEnv(env []envEntry, m machine) []string { return windowsEnvBlock(env, m.getenv) }
