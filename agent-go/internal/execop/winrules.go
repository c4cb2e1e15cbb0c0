package execop

import (
	"slices"
	"strings"
	"unicode/utf16"
)

// This file holds the Windows rules of Node/libuv that are pure string work, so they are built and tested on
// every platform: command-line quoting, program search, the environment block and the legacy WSL bash check.

// quoteWindowsArg quotes one argument exactly as libuv's quote_cmd_arg does, so that the child's C runtime
// parses it back unchanged.
func quoteWindowsArg(arg string) string {
	switch {
	case arg == "":
		return `""`
	case !strings.ContainsAny(arg, " \t\""):
		return arg
	case !strings.ContainsAny(arg, "\"\\"):
		return `"` + arg + `"`
	}
	// Walk backwards: backslashes are doubled when they precede a quote or the closing quote, and quotes are
	// escaped.
	var reversed []rune
	quoteHit := true
	runes := []rune(arg)
	for i := len(runes) - 1; i >= 0; i-- {
		c := runes[i]
		reversed = append(reversed, c)
		switch {
		case quoteHit && c == '\\':
			reversed = append(reversed, '\\')
		case c == '"':
			quoteHit = true
			reversed = append(reversed, '\\')
		default:
			quoteHit = false
		}
	}
	slices.Reverse(reversed)
	return `"` + string(reversed) + `"`
}

// windowsCommandLine joins quoted arguments with spaces (libuv make_program_args without verbatim mode).
func windowsCommandLine(argv []string) string {
	quoted := make([]string, len(argv))
	for i, arg := range argv {
		quoted[i] = quoteWindowsArg(arg)
	}
	return strings.Join(quoted, " ")
}

// searchWindowsPath finds a program as libuv's search_path does. A name with a directory part (\, / or :) is
// only looked up there (relative to cwd); a bare name is looked up in cwd first (unless skipCwd, set by
// NoDefaultCurrentDirectoryInExePath), then in each PATH entry (";"-separated, quotes stripped). A name with an
// extension is tried as is, then every name with ".com" and ".exe" appended. isFile reports whether a path
// names an existing non-directory.
func searchWindowsPath(file, cwd, path string, skipCwd bool, isFile func(string) bool) (string, bool) {
	if file == "" || file == "." {
		return "", false
	}
	nameStart := strings.LastIndexAny(file, `\/:`) + 1
	name := file[nameStart:]
	dot := strings.IndexByte(name, '.')
	hasExt := dot >= 0 && dot < len(name)-1
	if nameStart > 0 {
		return walkExtensions(file[:nameStart], name, cwd, hasExt, isFile)
	}
	if !skipCwd {
		if found, ok := walkExtensions("", file, cwd, hasExt, isFile); ok {
			return found, true
		}
	}
	for _, dir := range strings.Split(path, ";") {
		if len(dir) > 0 && (dir[0] == '"' || dir[0] == '\'') {
			dir = dir[1:]
		}
		if len(dir) > 0 && (dir[len(dir)-1] == '"' || dir[len(dir)-1] == '\'') {
			dir = dir[:len(dir)-1]
		}
		if dir == "" {
			continue
		}
		if found, ok := walkExtensions(dir, file, cwd, hasExt, isFile); ok {
			return found, true
		}
	}
	return "", false
}

func walkExtensions(dir, name, cwd string, hasExt bool, isFile func(string) bool) (string, bool) {
	exts := []string{"com", "exe"}
	if hasExt {
		exts = append([]string{""}, exts...)
	}
	for _, ext := range exts {
		candidate := joinWindowsSearch(dir, name, ext, cwd)
		if isFile(candidate) {
			return candidate, true
		}
	}
	return "", false
}

// joinWindowsSearch builds a candidate path like libuv's search_path_join_test: cwd is prepended to a
// relative dir, only its drive to a rooted one, nothing to a UNC or drive-absolute one; a drive-relative dir
// on cwd's drive continues from cwd.
func joinWindowsSearch(dir, name, ext, cwd string) string {
	useCwd := cwd
	switch {
	case len(dir) > 2 && isSlash(dir[0]) && isSlash(dir[1]):
		useCwd = ""
	case len(dir) >= 1 && isSlash(dir[0]):
		useCwd = cwd[:min(2, len(cwd))]
	case len(dir) >= 2 && dir[1] == ':' && (len(dir) < 3 || !isSlash(dir[2])):
		if len(cwd) < 2 || !strings.EqualFold(cwd[:2], dir[:2]) {
			useCwd = ""
		} else {
			dir = dir[2:]
		}
	case len(dir) > 2 && dir[1] == ':':
		useCwd = ""
	}
	var b strings.Builder
	b.WriteString(useCwd)
	if useCwd != "" && !strings.ContainsRune(`\/:`, rune(useCwd[len(useCwd)-1])) {
		b.WriteByte('\\')
	}
	b.WriteString(dir)
	if dir != "" && !strings.ContainsRune(`\/:`, rune(dir[len(dir)-1])) {
		b.WriteByte('\\')
	}
	b.WriteString(name)
	if ext != "" {
		b.WriteString("." + ext)
	}
	return b.String()
}

func isSlash(c byte) bool { return c == '\\' || c == '/' }

// isBatchFile reports whether a program name names a .bat or .cmd script, which Node refuses to run without a
// shell.
func isBatchFile(path string) bool {
	// Windows ignores trailing dots and spaces of a file name, so Node does too.
	lower := strings.ToLower(strings.TrimRight(path, ". "))
	return strings.HasSuffix(lower, ".bat") || strings.HasSuffix(lower, ".cmd")
}

// windowsRequiredEnv are copied from the agent into every child environment that lacks them, even without
// inheritEnv (libuv make_program_env).
var windowsRequiredEnv = []string{"HOMEDRIVE", "HOMEPATH", "LOGONSERVER", "PATH", "SYSTEMDRIVE", "SYSTEMROOT",
	"TEMP", "USERDOMAIN", "USERNAME", "USERPROFILE", "WINDIR"}

// windowsEnvBlock builds a child environment the way libuv does: entries sorted by UTF-16 code units,
// variables whose names differ only in case dropped after the first, then the required variables the
// environment lacks taken from the agent (agentEnv looks one up).
func windowsEnvBlock(entries []envEntry, agentEnv func(string) (string, bool)) []string {
	lines := envStrings(entries)
	slices.SortStableFunc(lines, compareUTF16)
	var out []string
	seen := map[string]bool{}
	for _, line := range lines {
		key := strings.ToUpper(envKey(line))
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, line)
	}
	for _, name := range windowsRequiredEnv {
		if seen[name] {
			continue
		}
		if value, ok := agentEnv(name); ok {
			out = append(out, name+"="+value)
		}
	}
	slices.SortStableFunc(out, compareUTF16)
	return out
}

// envKey returns the name of a KEY=VALUE line; a leading "=" belongs to the name (=C:=C:\dir).
func envKey(line string) string {
	if i := strings.IndexByte(line[min(1, len(line)):], '='); i >= 0 {
		return line[:i+min(1, len(line))]
	}
	return line
}

// compareUTF16 orders strings by UTF-16 code units, as wcscmp does on Windows.
func compareUTF16(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

// gitBashNotFound is NodeExecutionEnv's message when no bash exists on Windows.
func gitBashNotFound(searched []string) string {
	var b strings.Builder
	b.WriteString("No bash shell found. Options:\n  1. Install Git for Windows: https://git-scm.com/download/win\n" +
		"  2. Add your bash to PATH (Cygwin, MSYS2, etc.)\n  3. Configure an explicit shellPath\n\nSearched Git Bash in:\n")
	for i, path := range searched {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("  " + path)
	}
	return b.String()
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
