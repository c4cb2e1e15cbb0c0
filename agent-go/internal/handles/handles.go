// Package handles is the agent's table of open files and directories. Ids count from 1 and are never reused
// within a run, so a stale id can never reach a newer file; at most Limit handles are open at once.
//
// The table lock covers only the map: values are opaque to the table, and anything slow (reading a
// directory, writing a chunk) happens under the value's own lock, never the table's.
package handles

import (
	"sync"

	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// Limit is the most handles that may be open at once (pi-env's MAX_HANDLES).
const Limit = 4096

// Kind says what a handle refers to.
type Kind int

const (
	// File is a handle on an open file: a reader or a kept writer.
	File Kind = iota + 1
	// Dir is a handle on an open directory.
	Dir
)

type entry[F, D any] struct {
	kind Kind
	file F
	dir  D
}

// Table maps handle ids to open files (of type F) and directories (of type D). It is safe for concurrent use.
type Table[F, D any] struct {
	mu    sync.Mutex
	last  uint64
	limit int
	open  map[uint64]entry[F, D]
}

// New returns an empty table that holds at most limit handles.
func New[F, D any](limit int) *Table[F, D] {
	return &Table[F, D]{limit: limit, open: make(map[uint64]entry[F, D])}
}

// ErrTooMany is the failure of opening one handle more than the limit allows.
func ErrTooMany() *proto.Failure {
	return &proto.Failure{Code: "EMFILE", Message: "EMFILE: too many open files"}
}

func badHandle(message string) *proto.Failure {
	return &proto.Failure{Code: "EBADF", Message: message}
}

// Full reports whether another handle would exceed the limit, so a caller can refuse before it creates
// anything (a write with keep must not truncate a file it cannot keep).
func (t *Table[F, D]) Full() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.open) >= t.limit
}

// AddFile registers an open file and returns its new id, or EMFILE when the table is full.
func (t *Table[F, D]) AddFile(f F) (uint64, *proto.Failure) {
	return t.add(entry[F, D]{kind: File, file: f})
}

// AddDir registers an open directory and returns its new id, or EMFILE when the table is full.
func (t *Table[F, D]) AddDir(d D) (uint64, *proto.Failure) {
	return t.add(entry[F, D]{kind: Dir, dir: d})
}

func (t *Table[F, D]) add(e entry[F, D]) (uint64, *proto.Failure) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.open) >= t.limit {
		return 0, ErrTooMany()
	}
	t.last++
	t.open[t.last] = e
	return t.last, nil
}

// File returns the open file with id; EBADF "unknown handle" or "not a file handle" otherwise.
func (t *Table[F, D]) File(id uint64) (F, *proto.Failure) {
	e, failure := t.lookup(id, File)
	return e.file, failure
}

// Dir returns the open directory with id; EBADF "unknown handle" or "not a directory handle" otherwise.
func (t *Table[F, D]) Dir(id uint64) (D, *proto.Failure) {
	e, failure := t.lookup(id, Dir)
	return e.dir, failure
}

func (t *Table[F, D]) lookup(id uint64, kind Kind) (entry[F, D], *proto.Failure) {
	t.mu.Lock()
	e, ok := t.open[id]
	t.mu.Unlock()
	switch {
	case !ok:
		return entry[F, D]{}, badHandle("unknown handle")
	case e.kind != kind && kind == File:
		return entry[F, D]{}, badHandle("not a file handle")
	case e.kind != kind:
		return entry[F, D]{}, badHandle("not a directory handle")
	}
	return e, nil
}

// Remove takes id out of the table and returns what it referred to; ok is false for an unknown id. The caller
// closes the value.
func (t *Table[F, D]) Remove(id uint64) (kind Kind, file F, dir D, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.open[id]
	if ok {
		delete(t.open, id)
	}
	return e.kind, e.file, e.dir, ok
}

// Drain empties the table and returns every open file and directory, for closing at shutdown.
func (t *Table[F, D]) Drain() (files []F, dirs []D) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id, e := range t.open {
		if e.kind == File {
			files = append(files, e.file)
		} else {
			dirs = append(dirs, e.dir)
		}
		delete(t.open, id)
	}
	return files, dirs
}

// Len returns how many handles are open.
func (t *Table[F, D]) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.open)
}
