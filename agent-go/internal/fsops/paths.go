package fsops

import "strings"

// baseName is Node's path.basename of a path given to an operation: the last component, trailing separators
// ignored, "" for a root. Windows also treats '/' as a separator and skips a drive prefix.
func baseName(p string, windows bool) string {
	if windows {
		p = p[volumeLength(p, true):]
	}
	end := len(p)
	for end > 0 && isSeparator(p[end-1], windows) {
		end--
	}
	start := end
	for start > 0 && !isSeparator(p[start-1], windows) {
		start--
	}
	return p[start:end]
}

// dirName is Node's path.dirname: everything before the last component, "/" (or the drive root) for a child
// of the root, "." for a bare name.
func dirName(p string, windows bool) string {
	volume := volumeLength(p, windows)
	rest := p[volume:]
	end := len(rest)
	for end > 0 && isSeparator(rest[end-1], windows) {
		end--
	}
	for end > 0 && !isSeparator(rest[end-1], windows) {
		end--
	}
	rooted := len(rest) > 0 && isSeparator(rest[0], windows)
	for end > 1 && isSeparator(rest[end-1], windows) {
		end--
	}
	switch {
	case end == 0 && rooted:
		return p[:volume] + rest[:1]
	case end == 0 && volume > 0:
		return p[:volume]
	case end == 0:
		return "."
	}
	return p[:volume] + rest[:end]
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

// volumeLength is the length of a Windows volume prefix: "C:" or "\\server\share"; 0 elsewhere.
func volumeLength(p string, windows bool) int {
	if !windows {
		return 0
	}
	if len(p) >= 2 && p[1] == ':' && (p[0]|0x20) >= 'a' && (p[0]|0x20) <= 'z' {
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
