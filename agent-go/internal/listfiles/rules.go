package listfiles

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Names of the files that carry ignore rules.
const (
	gitignoreName = ".gitignore"
	ignoreName    = ".ignore"
	gitName       = ".git"
)

// rules are the ignore rules in force in one directory: the pattern lists of that directory and of each one
// above it within the scope, deepest first, and last the repository's info/exclude. Lists are shared between a
// directory and everything below it, so a deep tree costs one small link per directory that has rules.
type rules struct {
	list patternList
	// base is the path of the list's directory relative to the scope root: "" or "a/b/".
	base string
	next *rules
}

// ignored applies git's precedence: the first list (deepest first) with a matching pattern decides. scopeRel
// is the entry's path relative to the scope root.
func (r *rules) ignored(scopeRel, name string, isDir bool) bool {
	for l := r; l != nil; l = l.next {
		if ignored, found := l.list.decide(scopeRel[len(l.base):], name, isDir); found {
			return ignored
		}
	}
	return false
}

// push returns r with list on top, or r itself for an empty list.
func (r *rules) push(list patternList, base string) *rules {
	if len(list) == 0 {
		return r
	}
	return &rules{list: list, base: base, next: r}
}

// maxIgnoreFile bounds how much of an ignore file is read; git reads the whole file, but nobody writes
// ignore files this large on purpose, and a huge one must not exhaust the agent's memory.
const maxIgnoreFile = 16 << 20

// readIgnoreFile returns the patterns of a regular file, or nothing when it is missing, a symbolic link, not
// regular or unreadable.
func readIgnoreFile(path string) patternList {
	f, err := OpenNoFollow(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return nil
	}
	content, err := io.ReadAll(io.LimitReader(f, maxIgnoreFile))
	if err != nil {
		return nil
	}
	return parsePatterns(content)
}

// dirLists reads a directory's own ignore files: `.gitignore` first, then `.ignore`, whose patterns come later
// in the list and so win over the `.gitignore` of the same directory.
func dirLists(dir string, hasGitignore, hasIgnore bool) patternList {
	var list patternList
	if hasGitignore {
		list = append(list, readIgnoreFile(joinPath(dir, gitignoreName))...)
	}
	if hasIgnore {
		list = append(list, readIgnoreFile(joinPath(dir, ignoreName))...)
	}
	return list
}

// excludeFile reads `<repo>/.git/info/exclude` when `.git` is a directory.
func excludeFile(repo string) patternList {
	git := joinPath(repo, gitName)
	if info, err := os.Lstat(git); err != nil || !info.IsDir() {
		return nil
	}
	return readIgnoreFile(filepath.Join(git, "info", "exclude"))
}

// rootScope finds the rules in force at the listing root: it looks for the nearest directory at or above root
// with a `.git` entry (the repository root), and reads info/exclude and the ignore files of every directory
// from there down to root's parent. It returns them with root's path relative to the scope root ("" or "a/b/").
func rootScope(root string) (*rules, string) {
	var between []string // names from the repository root down to root, innermost last
	repo := ""
	for dir := root; ; {
		if _, err := os.Lstat(joinPath(dir, gitName)); err == nil {
			repo = dir
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		between = append([]string{filepath.Base(dir)}, between...)
		dir = parent
	}
	if repo == "" {
		// Outside a repository the listing root is the scope root.
		return nil, ""
	}
	chain := (*rules)(nil).push(excludeFile(repo), "")
	dir, base := repo, ""
	for _, name := range between {
		chain = chain.push(dirLists(dir, true, true), base)
		dir = filepath.Join(dir, name)
		base += name + "/"
	}
	return chain, base
}

// joinPath joins a directory and a relative path with `/` components.
func joinPath(dir, rel string) string {
	if rel == "" {
		return dir
	}
	if strings.HasSuffix(dir, "/") || strings.HasSuffix(dir, string(filepath.Separator)) {
		return dir + rel
	}
	return dir + "/" + rel
}
