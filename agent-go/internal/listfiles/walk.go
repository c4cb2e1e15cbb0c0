package listfiles

import (
	"container/heap"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Sizes of the walk.
const (
	// Workers is the number of goroutines reading directories ahead of the one being listed.
	Workers = 4
	// MaxAhead bounds the directories read and not yet listed, and MaxAheadEntries their entries: the walk's
	// memory is bounded by the tree's depth and these, however large the tree.
	MaxAhead        = 64
	MaxAheadEntries = 4096
	// readBatch is how many entries are read from a directory at a time (the walk checks for a stop between).
	readBatch = 1024
)

// errStopped ends a walk that was asked to stop (an abort, or the consumer has enough).
var errStopped = errors.New("walk stopped")

// Options select what a walk lists (spec/semantics.md LF3).
type Options struct {
	// Globs, when not empty, keep only the files the patterns select (LF4).
	Globs patternList
	// Hidden lists names starting with ".".
	Hidden bool
	// Ignore honours the ignore files.
	Ignore bool
	// NoLinks leaves symbolic links out (searchFiles reads files, and never follows a link).
	NoLinks bool
	// Unreadable, when set, counts the directories below the root that could not be read (LF15).
	Unreadable *atomic.Int64
}

// NewOptions builds a walk's options from listFiles' (or searchFiles') fields. none is true when globs were given
// but every one is blank or a comment: such a walk selects nothing.
func NewOptions(globs []string, hidden, ignore bool) (opts Options, none bool) {
	opts = Options{Hidden: hidden, Ignore: ignore}
	for _, glob := range globs {
		if p, ok := parsePattern(glob); ok {
			opts.Globs = append(opts.Globs, p)
		}
	}
	return opts, len(globs) > 0 && len(opts.Globs) == 0
}

// Node states.
const (
	pending int32 = iota
	reading
	ready
)

// dir is one directory of the walk.
type dir struct {
	// rel is its path below the root with a trailing "/" ("" for the root), raw bytes.
	rel string
	// scopeRel is its path below its scope root, in the same form.
	scopeRel string
	// rules in force for its entries before its own ignore files are read.
	rules *rules
	// selected: the directory (or one above it) matched a glob, so every file below it is selected.
	selected bool

	state atomic.Int32
	done  chan struct{}
	// entries, set once the directory is read: what it lists, sorted in listing order.
	entries []entry
}

// entry is a kept entry of a directory: a file to list or a directory to descend.
type entry struct {
	name string
	sub  *dir // nil for a file
}

// walker lists one tree. The consumer (Walk's caller) takes directories in listing order, reading a directory
// itself when no worker has got to it yet; workers read the pending directories that come next in that order.
type walker struct {
	root string
	opts Options

	mu sync.Mutex
	// wake is signalled when work is queued, a directory is released, or the walk stops.
	wake  *sync.Cond
	queue dirHeap
	ahead int
	// aheadEntries counts the entries of the directories counted by ahead.
	aheadEntries int
	stopped      bool

	stop atomic.Bool
}

// Walk lists the files below root in listing order (LF12), calling emit with each path (raw bytes, "/"
// separators) as the directory's part ("" or "a/b/") and the name, so no path is built just to be copied. A non-nil error from emit ends the walk and is returned; so is errStopped after stop() fires.
// The root must already be known to be a readable directory. Every goroutine Walk starts is joined before it
// returns.
func Walk(root string, opts Options, stopSignal <-chan struct{}, emit func(dir, name string) error) error {
	w := &walker{root: root, opts: opts}
	w.wake = sync.NewCond(&w.mu)
	top := &dir{done: make(chan struct{})}
	if opts.Ignore {
		top.rules, top.scopeRel = rootScope(root)
	}

	var wg sync.WaitGroup
	quit := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-stopSignal:
			w.halt()
		case <-quit:
		}
	}()
	for range Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.work()
		}()
	}
	err := w.list(top, emit)
	close(quit)
	w.halt()
	wg.Wait()
	return err
}

// halt stops the workers and makes the consumer's next check fail.
func (w *walker) halt() {
	w.stop.Store(true)
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
	w.wake.Broadcast()
}

// list emits the files of d and of everything below it, in order.
func (w *walker) list(d *dir, emit func(dir, name string) error) error {
	if w.stop.Load() {
		return errStopped
	}
	w.await(d)
	defer w.release(d)
	for _, e := range d.entries {
		if e.sub != nil {
			if err := w.list(e.sub, emit); err != nil {
				return err
			}
			continue
		}
		if err := emit(d.rel, e.name); err != nil {
			return err
		}
	}
	return nil
}

// await returns once d is read, reading it here if no worker has claimed it.
func (w *walker) await(d *dir) {
	if d.state.CompareAndSwap(pending, reading) {
		w.read(d)
		return
	}
	<-d.done
}

// release forgets one listed directory, letting the workers read more ahead.
func (w *walker) release(d *dir) {
	w.mu.Lock()
	w.ahead--
	w.aheadEntries -= len(d.entries)
	w.mu.Unlock()
	d.entries = nil
	w.wake.Signal()
}

// work reads queued directories, the next ones in listing order first, while fewer than MaxAhead are waiting.
func (w *walker) work() {
	for {
		w.mu.Lock()
		for !w.stopped && (len(w.queue) == 0 || w.ahead >= MaxAhead || w.aheadEntries >= MaxAheadEntries) {
			w.wake.Wait()
		}
		if w.stopped {
			w.mu.Unlock()
			return
		}
		d := heap.Pop(&w.queue).(*dir)
		w.mu.Unlock()
		if d.state.CompareAndSwap(pending, reading) {
			w.read(d)
		}
	}
}

// read reads and classifies d's entries, queues its subdirectories and marks it ready. A directory that cannot
// be read lists nothing (LF15).
func (w *walker) read(d *dir) {
	raw := w.readEntries(d)
	d.entries = w.classify(d, raw)
	w.mu.Lock()
	w.ahead++
	w.aheadEntries += len(d.entries)
	w.mu.Unlock()
	var subs []*dir
	for _, e := range d.entries {
		if e.sub != nil {
			subs = append(subs, e.sub)
		}
	}
	if len(subs) > 0 {
		w.mu.Lock()
		for _, s := range subs {
			heap.Push(&w.queue, s)
		}
		w.mu.Unlock()
		for range min(len(subs), Workers) {
			w.wake.Signal()
		}
	}
	d.state.Store(ready)
	close(d.done)
}

// rawEntry is a directory entry as read: its name and kind.
type rawEntry struct {
	name string
	kind kind
}

type kind uint8

const (
	kindOther kind = iota
	kindFile
	kindLink
	kindDir
)

// readEntries reads d's entries in batches, stopping early when the walk stops.
func (w *walker) readEntries(d *dir) []rawEntry {
	f, err := openDir(joinPath(w.root, d.rel))
	if err != nil {
		w.countUnreadable()
		return nil
	}
	defer f.Close()
	var out []rawEntry
	for !w.stop.Load() {
		batch, err := f.ReadDir(readBatch)
		for _, e := range batch {
			out = append(out, rawEntry{name: e.Name(), kind: kindOf(e)})
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				// A directory that fails half-way is treated as unreadable, not half listed.
				w.countUnreadable()
				return nil
			}
			break
		}
	}
	return out
}

// countUnreadable counts a directory that could not be read, when the caller asked for the count.
func (w *walker) countUnreadable() {
	if w.opts.Unreadable != nil {
		w.opts.Unreadable.Add(1)
	}
}

func kindOf(e os.DirEntry) kind {
	t := e.Type()
	switch {
	case t.IsRegular():
		return kindFile
	case t.IsDir():
		return kindDir
	case t&os.ModeSymlink != 0:
		return kindLink
	default:
		return kindOther
	}
}

// classify applies LF5–LF11 to d's entries and sorts what is kept.
func (w *walker) classify(d *dir, raw []rawEntry) []entry {
	opts := &w.opts
	chain, scopeRel := d.rules, d.scopeRel
	if opts.Ignore {
		var hasGit, hasGitignore, hasIgnore bool
		for _, e := range raw {
			switch e.name {
			case gitName:
				hasGit = true
			case gitignoreName:
				hasGitignore = e.kind == kindFile
			case ignoreName:
				hasIgnore = e.kind == kindFile
			}
		}
		path := joinPath(w.root, d.rel)
		if hasGit && d.rel != "" {
			// A nested repository: the outer rules stop here (LF6).
			chain, scopeRel = (*rules)(nil).push(excludeFile(path), ""), ""
		}
		chain = chain.push(dirLists(path, hasGitignore, hasIgnore), scopeRel)
	}
	kept := make([]entry, 0, len(raw))
	for _, e := range raw {
		if e.kind == kindOther || e.name == gitName || (!opts.Hidden && e.name[0] == '.') ||
			(opts.NoLinks && e.kind == kindLink) {
			continue
		}
		isDir := e.kind == kindDir
		if opts.Ignore && chain.ignored(scopeRel+e.name, e.name, isDir) {
			continue
		}
		selected := d.selected
		if !selected && len(opts.Globs) > 0 {
			selected, _ = opts.Globs.decide(d.rel+e.name, e.name, isDir)
			if !selected && !isDir {
				continue
			}
		}
		if !isDir {
			kept = append(kept, entry{name: e.name})
			continue
		}
		sub := &dir{
			rel:      d.rel + e.name + "/",
			scopeRel: scopeRel + e.name + "/",
			rules:    chain,
			selected: selected || len(opts.Globs) == 0,
			done:     make(chan struct{}),
		}
		kept = append(kept, entry{name: e.name, sub: sub})
	}
	slices.SortFunc(kept, compareEntries)
	return kept
}

// compareEntries orders entries as their full paths compare byte by byte: a directory sorts as its name
// followed by "/", since every path below it continues that way.
func compareEntries(a, b entry) int {
	if a.sub == nil && b.sub == nil {
		return strings.Compare(a.name, b.name)
	}
	n := min(len(a.name), len(b.name))
	if c := strings.Compare(a.name[:n], b.name[:n]); c != 0 {
		return c
	}
	return next(a, n) - next(b, n)
}

// next is the byte of e's sort key at position i (the name's, then "/" for a directory), or -1 at the end.
func next(e entry, i int) int {
	switch {
	case i < len(e.name):
		return int(e.name[i])
	case i == len(e.name) && e.sub != nil:
		return '/'
	default:
		return -1
	}
}

// dirHeap orders pending directories by their place in the listing.
type dirHeap []*dir

func (h dirHeap) Len() int           { return len(h) }
func (h dirHeap) Less(i, j int) bool { return h[i].rel < h[j].rel }
func (h dirHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dirHeap) Push(x any)        { *h = append(*h, x.(*dir)) }
func (h *dirHeap) Pop() any {
	old := *h
	d := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return d
}
