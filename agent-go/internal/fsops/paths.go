package fsops

import "strings"

// baseName is Node's path.basename (path.win32's on Windows) of a path given to an operation: the last component,
// trailing separators ignored, "" for a root. Windows also treats '/' as a separator and skips a drive prefix
// ("C:"), but not a UNC one: the basename of \\server\share is "share".
func baseName(p string, windows bool) string {
	start := 0
	if windows && len(p) >= 2 && isDriveLetter(p[0]) && p[1] == ':' {
		start = 2
	}
	end := len(p)
	for end > start && isSeparator(p[end-1], windows) {
		end--
	}
	from := end
	for from > start && !isSeparator(p[from-1], windows) {
		from--
	}
	return p[from:end]
}

// dirName is Node's path.dirname (path.win32's on Windows): everything before the last component, without the
// one separator in front of it; the root for a child of the root; "." for a bare name. Like Node it keeps
// repeated separators ("/a//b" → "/a/"), and a Windows root is a drive ("C:", "C:\\"), a UNC share
// ("\\server\share\") or a single leading separator.
func dirName(p string, windows bool) string {
	if p == "" {
		return "."
	}
	rootEnd, offset := -1, 0
	if isSeparator(p[0], windows) {
		rootEnd, offset = 1, 1
		if windows {
			if uncRoot, whole := uncRootLength(p); whole {
				return p
			} else if uncRoot > 0 {
				rootEnd, offset = uncRoot, uncRoot
			}
		}
	} else if windows && len(p) >= 2 && isDriveLetter(p[0]) && p[1] == ':' {
		rootEnd = 2
		if len(p) > 2 && isSeparator(p[2], true) {
			rootEnd = 3
		}
		offset = rootEnd
	}
	// Back over the last component's trailing separators and the component itself, to the separator before it.
	i := len(p) - 1
	for i >= offset && isSeparator(p[i], windows) {
		i--
	}
	for i >= offset && !isSeparator(p[i], windows) {
		i--
	}
	switch {
	case i < offset && rootEnd == -1:
		return "."
	case i < offset:
		return p[:rootEnd]
	case !windows && rootEnd == 1 && i == 1:
		return "//" // Node's path.posix keeps a leading "//" ("//a" → "//"), as POSIX allows it a meaning
	}
	return p[:i]
}

// uncRootLength measures a UNC root at the start of p (\\server\share, separators either way, repeated ones
// allowed between server and share): whole when p is that root and nothing more; otherwise the length of the
// root with the separator after it, or 0 when p does not start with one.
func uncRootLength(p string) (length int, whole bool) {
	if len(p) < 2 || !isSeparator(p[0], true) || !isSeparator(p[1], true) {
		return 0, false
	}
	j := 2
	for j < len(p) && !isSeparator(p[j], true) {
		j++
	}
	if j == len(p) || j == 2 {
		return 0, false
	}
	last := j
	for j < len(p) && isSeparator(p[j], true) {
		j++
	}
	if j == len(p) || j == last {
		return 0, false
	}
	last = j
	for j < len(p) && !isSeparator(p[j], true) {
		j++
	}
	if j == len(p) {
		return 0, true
	}
	return j + 1, false
}

// joinEntry is the path of a directory entry: dir + separator + name (Node's path.resolve(dir, name) for the
// normalised absolute directories the client sends).
func joinEntry(dir, name string, windows bool) string {
	if dir != "" && isSeparator(dir[len(dir)-1], windows) {
		return dir + name
	}
	if windows {
		return dir + `\` + name
	}
	return dir + "/" + name
}

// lastSeparator is the index of the last separator in p, -1 if none.
func lastSeparator(p string, windows bool) int {
	if windows {
		return strings.LastIndexAny(p, `\/`)
	}
	return strings.LastIndexByte(p, '/')
}

func isSeparator(c byte, windows bool) bool { return c == '/' || (windows && c == '\\') }

// isDriveLetter is Node's isWindowsDeviceRoot: A-Z or a-z.
func isDriveLetter(c byte) bool { return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' }

// volumeLength is the length of a Windows volume prefix: "C:" or "\\server\share"; 0 elsewhere.
func volumeLength(p string, windows bool) int {
	if !windows {
		return 0
	}
	if len(p) >= 2 && p[1] == ':' && isDriveLetter(p[0]) {
		return 2
	}
	if len(p) >= 2 && isSeparator(p[0], true) && isSeparator(p[1], true) {
		// \\server\share: two components after the leading pair.
		i := 2
		for part := 0; part < 2; part++ {
			for i < len(p) && !isSeparator(p[i], true) {
				i++
			}
			if part == 0 && i < len(p) {
				i++
			}
		}
		return i
	}
	return 0
}
