package watch

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/outpost-dev/outpost/agent-go/internal/errno"
	"golang.org/x/text/encoding/unicode"
)

// Entry kinds of a snapshot.
const (
	kindFile      = "file"
	kindDirectory = "directory"
	kindSymlink   = "symlink"
	kindOther     = "other"
)

// Polling mode hashes small files modified recently, so a rewrite within the timestamp granularity that keeps
// size and mtime is still seen.
const (
	hashMaxBytes = 256 << 10
	hashRecentMs = 5000
)

// entry is what a snapshot remembers of one path. Directories (and every ancestor) compare by identity only.
type entry struct {
	kind    string
	dev     uint64
	ino     uint64
	size    int64
	mtimeMs float64
	hash    string
}

// identityOnly drops what changes without the path being replaced (timestamps of a directory whose siblings
// change).
func (e entry) identityOnly() entry {
	return entry{kind: e.kind, dev: e.dev, ino: e.ino}
}

// snapshot maps absolute paths to their entries.
type snapshot map[string]entry

// budgetError is the failure of a tree over the directory budget.
type budgetError struct{ max int64 }

func (e budgetError) Error() string { return fmt.Sprintf("Watched paths exceed %d directories", e.max) }

// scanResult is one scan: the entries, and which file targets were reached through a symbolic link.
type scanResult struct {
	entries     snapshot
	linkedFiles map[string]bool
}

// scanner builds one snapshot of every target (Durable's `scan`).
type scanner struct {
	targets  []target
	polling  bool
	max      int64
	stopped  func() bool
	now      float64
	result   scanResult
	dirs     map[string]bool // directories counted toward the budget
	listed   map[string]string
	scanned  map[scanKey]bool
	visits   int
	readDir  func(string) ([]string, error)
	fileHash func(string) (string, bool)
}

type scanKey struct {
	target int
	dir    string
}

// errScanStopped ends a scan of a watcher closed meanwhile.
var errScanStopped = errors.New("watcher closed during the scan")

func newScanner(targets []target, polling bool, max int64, stopped func() bool) *scanner {
	return &scanner{
		targets:  targets,
		polling:  polling,
		max:      max,
		stopped:  stopped,
		now:      float64(time.Now().UnixNano()) / 1e6,
		result:   scanResult{entries: snapshot{}, linkedFiles: map[string]bool{}},
		dirs:     map[string]bool{},
		listed:   map[string]string{},
		scanned:  map[scanKey]bool{},
		readDir:  readDirNames,
		fileHash: hashFile,
	}
}

// scan records every target in target order.
func (s *scanner) scan() (scanResult, error) {
	for i, t := range s.targets {
		if err := s.scanTarget(i, t); err != nil {
			return scanResult{}, err
		}
	}
	return s.result, nil
}

func (s *scanner) scanTarget(index int, t target) error {
	for _, ancestor := range ancestors(t.path) {
		if _, seen := s.result.entries[ancestor]; seen {
			continue
		}
		if e, err := statEntry(ancestor, false); err == nil {
			s.result.entries[ancestor] = e.identityOnly()
		}
	}
	e, err := statEntry(t.path, true)
	if err != nil {
		if isPermissionError(err) {
			return errno.Fail(err, "stat", t.path)
		}
		return nil // missing: watched for its creation
	}
	// A target's own (followed) entry wins over what another target's listing recorded.
	s.record(t.path, e)
	if e.kind == kindFile {
		if link, err := statEntry(t.path, false); err == nil && link.kind == kindSymlink {
			s.result.linkedFiles[t.path] = true
		}
	}
	if e.kind != kindDirectory {
		return nil
	}
	if err := s.count(t.path); err != nil {
		return err
	}
	return s.scanDir(index, t, t.path)
}

// scanDir records the entries of dir for the target, descending for recursive targets. Symbolic links below a
// target are never followed.
func (s *scanner) scanDir(index int, t target, dir string) error {
	key := scanKey{index, dir}
	if s.scanned[key] {
		return nil
	}
	s.scanned[key] = true
	if err := s.yield(); err != nil {
		return err
	}
	names, err := s.readDir(dir)
	if err != nil {
		if dir == t.path && isPermissionError(err) {
			return errno.Fail(err, "scandir", dir)
		}
		if isSkippableDirError(err) {
			return nil
		}
		return errno.Fail(err, "scandir", dir)
	}
	for _, name := range names {
		// Node reads names lossily decoded and lstats them under that spelling (a name that is not UTF-8
		// then fails and is skipped).
		name = nodeName(name)
		if t.excludes(name) {
			continue
		}
		path := joinPath(dir, name)
		kind, listed := s.listed[path]
		if !listed {
			e, err := statEntry(path, false)
			if err != nil {
				continue
			}
			kind = e.kind
			s.listed[path] = kind
			if _, recorded := s.result.entries[path]; !recorded {
				s.record(path, e)
			}
		}
		if t.recursive && kind == kindDirectory {
			if err := s.count(path); err != nil {
				return err
			}
			if err := s.scanDir(index, t, path); err != nil {
				return err
			}
		}
	}
	return nil
}

// yield lets request goroutines run during a long scan (the agent runs Go code on one P), and stops a scan of a
// watcher closed meanwhile.
func (s *scanner) yield() error {
	s.visits++
	if s.visits%64 == 0 {
		runtime.Gosched()
	}
	if s.stopped != nil && s.stopped() {
		return errScanStopped
	}
	return nil
}

// count adds a directory to the budget.
func (s *scanner) count(dir string) error {
	s.dirs[dir] = true
	if int64(len(s.dirs)) > s.max {
		return budgetError{s.max}
	}
	return nil
}

// record stores an entry; directories by identity, and in polling mode small recent files with a content hash.
func (s *scanner) record(path string, e entry) {
	switch {
	case e.kind == kindDirectory:
		e = e.identityOnly()
	case s.polling && e.kind == kindFile && e.size <= hashMaxBytes && s.now-e.mtimeMs < hashRecentMs:
		if hash, ok := s.fileHash(path); ok {
			e.hash = hash
		}
	}
	s.result.entries[path] = e
}

// readDirNames lists a directory's names (in any order: the snapshot is a map).
func readDirNames(dir string) ([]string, error) {
	f, err := openDir(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// hashFile is the SHA-256 of a file's content; false when it cannot be read or is no longer a regular file.
func hashFile(path string) (string, bool) {
	f, err := openRegular(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, hashMaxBytes+1)); err != nil {
		return "", false
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

// diff adds to changed every path new, changed or gone between two snapshots, as reported for the targets.
func diff(before, after snapshot, targets []target, changed map[string]bool) {
	for path, e := range after {
		if old, ok := before[path]; !ok || old != e {
			changed[reported(path, targets)] = true
		}
	}
	for path := range before {
		if _, ok := after[path]; !ok {
			changed[reported(path, targets)] = true
		}
	}
}

// reported is the path a change of path is reported as: itself when at or below a target, otherwise (an
// ancestor that changed moved the targets below it) the first target below it.
func reported(path string, targets []target) string {
	for _, t := range targets {
		if within(path, t.path) {
			return path
		}
	}
	for _, t := range targets {
		if within(t.path, path) {
			return t.path
		}
	}
	return path
}

// within reports whether path is base or below it.
func within(path, base string) bool {
	if path == base {
		return true
	}
	if !strings.HasPrefix(path, base) {
		return false
	}
	return strings.HasSuffix(base, string(os.PathSeparator)) || path[len(base)] == os.PathSeparator
}

// ancestors lists the directories above path, nearest first, up to the root; for the root itself it is just
// the root.
func ancestors(path string) []string {
	var out []string
	for current := path; ; {
		parent := parentDir(current)
		if parent == current {
			if len(out) == 0 {
				out = append(out, current)
			}
			return out
		}
		out = append(out, parent)
		current = parent
	}
}

// sortedPaths orders paths by UTF-16 code units, as JavaScript's default sort does.
func sortedPaths(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for path := range set {
		out = append(out, path)
	}
	slices.SortFunc(out, compareUTF16)
	return out
}

// compareUTF16 compares two strings by UTF-16 code units. It differs from byte order only where a character
// above U+FFFF (a surrogate pair) meets one in U+E000–U+FFFF.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			return slices.Compare(utf16.Encode([]rune{ra}), utf16.Encode([]rune{rb}))
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

// nodeName is a file name as Node decodes it: UTF-8, with one U+FFFD per maximal invalid subpart (the WHATWG
// decoder's rule, which Go's strings.ToValidUTF8 and encoding/json do not follow).
func nodeName(raw string) string {
	if utf8.ValidString(raw) {
		return raw
	}
	decoded, err := unicode.UTF8.NewDecoder().String(raw)
	if err != nil {
		return strings.ToValidUTF8(raw, "\uFFFD")
	}
	return decoded
}
