package watch

import (
	"os"
	"path/filepath"
	"strings"
)

// target is one watched path as the watcher uses it: resolved, with its recursion and excludes.
type target struct {
	path      string
	recursive bool
	hidden    bool
	names     map[string]bool
}

// excludes reports whether an entry name below the target is left out (excludes never apply to the target
// itself).
func (t target) excludes(name string) bool {
	return t.hidden && strings.HasPrefix(name, ".") || t.names[name]
}

// covers reports whether a path seen in a native event concerns this target: the target itself or one of its
// ancestors, or an entry below it that the target watches (any depth when recursive, direct children otherwise)
// and no component of which is excluded.
func (t target) covers(path string) bool {
	if path == t.path || within(t.path, path) {
		return true
	}
	if !within(path, t.path) {
		return false
	}
	rest := strings.TrimPrefix(path[len(t.path):], string(os.PathSeparator))
	parts := strings.Split(rest, string(os.PathSeparator))
	if !t.recursive && len(parts) > 1 {
		return false
	}
	for _, part := range parts {
		if t.excludes(part) {
			return false
		}
	}
	return true
}

// parentDir is the directory above path (the root is its own parent).
func parentDir(path string) string { return filepath.Dir(path) }

// joinPath is dir + separator + name, without doubling the separator of a root.
func joinPath(dir, name string) string {
	if strings.HasSuffix(dir, string(os.PathSeparator)) {
		return dir + name
	}
	return dir + string(os.PathSeparator) + name
}
