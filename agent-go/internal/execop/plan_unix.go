//go:build unix

package execop

import (
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/outpost-dev/outpost/agent-go/internal/errno"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// The POSIX rules of planning: Durable's shell search, execvp's program search, the environment as merged.

// defaultSearchPath is libuv's _PATH_DEFPATH, searched when the command's environment has no PATH (Node with
// env {} finds /usr/bin programs but not /usr/local/bin ones).
const defaultSearchPath = "/usr/bin:/bin"

// fixedBash is the bash Durable tries first.
const fixedBash = "/bin/bash"

// selectShell picks the shell for a string command when none is configured: /bin/bash, `which bash`, then "sh"
// (to be found on PATH).
func selectShell(m machine) (string, *proto.Failure) {
	if m.exists(fixedBash) {
		return fixedBash, nil
	}
	if found := m.findBash(); found != "" && m.exists(found) {
		return found, nil
	}
	return "sh", nil
}

// locateProgram finds the file to execute, failing as libuv's spawn does: a working directory that is not a
// directory is ENOTDIR, then the program is searched like execvp with the command's environment.
func locateProgram(program, cwd string, cwdInfo fs.FileInfo, env []envEntry, m machine) (string, *proto.Failure) {
	if !cwdInfo.IsDir() {
		return "", spawnFailure(program, "ENOTDIR")
	}
	path, code := findProgram(program, cwd, env, m)
	if code != "" {
		return "", spawnFailure(program, code)
	}
	return path, nil
}

// findProgram searches file like execvp: a name with a slash is used as is (relative to the command's
// directory); otherwise each PATH entry is tried in order, an empty entry meaning the command's directory. A
// candidate that exists but cannot be executed is remembered (EACCES) and the search goes on; nothing found is
// ENOENT. It returns the path or the libuv code.
func findProgram(file, dir string, env []envEntry, m machine) (string, string) {
	if strings.Contains(file, "/") {
		return file, ""
	}
	search, ok := lookupEnv(env, "PATH", false)
	if !ok {
		search = defaultSearchPath
	}
	sawEACCES := false
	for _, entry := range strings.Split(search, ":") {
		candidate := file
		if entry != "" {
			candidate = entry + "/" + file
		}
		if !filepath.IsAbs(candidate) {
			candidate = filepath.Join(dir, candidate)
		}
		switch code := executable(candidate, m); code {
		case "":
			return candidate, ""
		case "EACCES":
			sawEACCES = true
		case "ENOENT", "ENOTDIR", "ESTALE", "ENODEV", "ETIMEDOUT", "ENAMETOOLONG":
		default:
			return "", code
		}
	}
	if sawEACCES {
		return "", "EACCES"
	}
	return "", "ENOENT"
}

// executable returns "" when execve could run path, else the libuv code execve would fail with.
func executable(path string, m machine) string {
	info, err := m.stat(path)
	if err != nil {
		if code := errno.Code(err); code != errno.Unknown {
			return code
		}
		return "ENOENT"
	}
	if !info.Mode().IsRegular() || !m.canExecute(path) {
		return "EACCES"
	}
	return ""
}

// childEnv is the merged environment as KEY=VALUE lines, in its order.
func childEnv(env []envEntry, _ machine) []string { return envStrings(env) }
