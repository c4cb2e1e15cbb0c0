package watch

import (
	"path/filepath"
	"strings"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// Hub is one fsnotify instance (one inotify descriptor) shared by the watchers of a connection, as Node shares one
// per process: a kernel limit on instances (128 per user by default on Linux) must not cap how many watchers a
// client opens. Each path is watched once however many watchers want it; events go to every watcher that wants the
// path or its parent directory, and each watcher decides what concerns it.
//
// The kernel watches inodes, not names: two names of one directory (a symbolic link and its target, a bind mount)
// share one watch, which fsnotify reports under the name it was first added by, and removing either name removes
// it for both. Node's watchers each get events under their own name, so the hub keeps, per identity (dev, ino),
// every name given to fsnotify: an event is handed to the watchers of each of them, spelled with that name, and
// a name nobody wants any more keeps its kernel watch while another name of the same identity is wanted.
type Hub struct {
	// fsMu serializes the changes of kernel watches (and the hub's start and end), so that the watches always
	// match wanted; dispatch takes only wantedMu, briefly, so fsnotify's reader is never held up behind a change.
	fsMu     sync.Mutex
	fs       *fsnotify.Watcher
	closed   bool
	wantedMu sync.Mutex
	wanted   map[string]map[*subscriber]bool
	// ids is the identity each name was added on (wanted names, and names kept for their kernel watch).
	ids map[string]identity
	// names lists, per identity, the names it was added under.
	names   map[identity]map[string]bool
	running sync.WaitGroup
}

// NewHub returns a hub; the fsnotify instance is made on the first watch.
func NewHub() *Hub {
	return &Hub{wanted: map[string]map[*subscriber]bool{}, ids: map[string]identity{}, names: map[identity]map[string]bool{}}
}

// subscriber is one watcher's inbox: events are queued without blocking the hub (a watcher may be busy scanning),
// and signal wakes the watcher's loop. Events are kept once per path, their kinds merged: a watcher only asks
// where something happened and whether a watched path went away, so a file rewritten a million times during a
// long scan costs one entry, as in Node's set of pending paths.
type subscriber struct {
	mu     sync.Mutex
	events map[string]fsnotify.Op
	rescan bool
	signal chan struct{}
}

func newSubscriber() *subscriber {
	return &subscriber{events: map[string]fsnotify.Op{}, signal: make(chan struct{}, 1)}
}

func (s *subscriber) push(event fsnotify.Event, rescan bool) {
	s.mu.Lock()
	if rescan {
		s.rescan = true
	} else {
		s.events[event.Name] |= event.Op
	}
	s.mu.Unlock()
	select {
	case s.signal <- struct{}{}:
	default:
	}
}

// take returns the queued events and whether a rescan was asked for (the kernel's queue overflowed).
func (s *subscriber) take() ([]fsnotify.Event, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	events := make([]fsnotify.Event, 0, len(s.events))
	for name, op := range s.events {
		events = append(events, fsnotify.Event{Name: name, Op: op})
	}
	rescan := s.rescan
	// A new map, not clear(): a map keeps the room of its largest burst.
	s.events = map[string]fsnotify.Op{}
	s.rescan = false
	return events, rescan
}

// queued is how many entries wait in the inbox.
func (s *subscriber) queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.events)
}

// add watches path, whose identity is id, for sub. The kernel watch is (re)made even when another watcher has the
// path, so it follows whatever is at the path now (a directory replaced since gets watched instead of the old one).
func (h *Hub) add(sub *subscriber, path string, id identity) error {
	h.fsMu.Lock()
	defer h.fsMu.Unlock()
	if h.closed {
		return fsnotify.ErrClosed
	}
	if h.fs == nil {
		fs, err := fsnotify.NewWatcher()
		if err != nil {
			return err
		}
		h.fs = fs
		h.running.Add(1)
		go h.dispatch(fs)
	}
	if err := h.fs.Add(path); err != nil {
		return err
	}
	h.wantedMu.Lock()
	defer h.wantedMu.Unlock()
	if h.wanted[path] == nil {
		h.wanted[path] = map[*subscriber]bool{}
	}
	h.wanted[path][sub] = true
	if old, known := h.ids[path]; known && old != id {
		h.forgetName(old, path)
	}
	h.ids[path] = id
	if h.names[id] == nil {
		h.names[id] = map[string]bool{}
	}
	h.names[id][path] = true
	return nil
}

// remove drops sub's interest in path. When nobody wants any name of its identity any more, the kernel watches of
// all those names go; until then the name stays, since its watch may be the one the other names share.
func (h *Hub) remove(sub *subscriber, path string) {
	h.fsMu.Lock()
	defer h.fsMu.Unlock()
	for _, name := range h.dropInterest(sub, path) {
		if h.fs != nil {
			// An error means the kernel dropped the watch already (the directory was deleted), or fsnotify knew
			// the name only as another name's watch: nothing left to do.
			_ = h.fs.Remove(name)
		}
	}
}

// dropInterest forgets that sub wants path; it returns the names whose kernel watches are no longer needed.
func (h *Hub) dropInterest(sub *subscriber, path string) []string {
	h.wantedMu.Lock()
	defer h.wantedMu.Unlock()
	subs := h.wanted[path]
	if !subs[sub] {
		return nil
	}
	delete(subs, sub)
	if len(subs) > 0 {
		return nil
	}
	delete(h.wanted, path)
	id := h.ids[path]
	for name := range h.names[id] {
		if len(h.wanted[name]) > 0 {
			return nil
		}
	}
	var unused []string
	for name := range h.names[id] {
		unused = append(unused, name)
		delete(h.ids, name)
	}
	delete(h.names, id)
	return unused
}

// forgetName takes name out of the names of id (the name now has another identity).
func (h *Hub) forgetName(id identity, name string) {
	delete(h.names[id], name)
	if len(h.names[id]) == 0 {
		delete(h.names, id)
	}
}

// deliver hands an event on base (a watched name: the event's path or its directory) to the watchers of every
// name of base's identity, spelled with that name.
func (h *Hub) deliver(base string, event fsnotify.Event) {
	id, known := h.ids[base]
	if !known {
		return
	}
	rest := strings.TrimPrefix(event.Name[len(base):], string(filepath.Separator))
	for name := range h.names[id] {
		spelled := event
		if rest != "" {
			spelled.Name = joinPath(name, rest)
		} else {
			spelled.Name = name
		}
		for sub := range h.wanted[name] {
			sub.push(spelled, false)
		}
	}
}

// Close ends the fsnotify instance and joins its goroutines; the watchers using the hub must be closed first.
func (h *Hub) Close() {
	h.fsMu.Lock()
	h.closed = true
	fs := h.fs
	h.fs = nil
	h.fsMu.Unlock()
	if fs != nil {
		_ = fs.Close()
	}
	h.running.Wait()
}

// dispatch hands each event to the watchers wanting its path or its parent (the watch it came from), and a
// kernel queue overflow to every watcher as a rescan, until the instance closes.
func (h *Hub) dispatch(fs *fsnotify.Watcher) {
	defer h.running.Done()
	for {
		select {
		case event, ok := <-fs.Events:
			if !ok {
				return
			}
			event.Name = filepath.Clean(event.Name)
			h.wantedMu.Lock()
			h.deliver(event.Name, event)
			if dir := filepath.Dir(event.Name); dir != event.Name {
				h.deliver(dir, event)
			}
			h.wantedMu.Unlock()
		case _, ok := <-fs.Errors:
			if !ok {
				return
			}
			h.wantedMu.Lock()
			for _, subs := range h.wanted {
				for sub := range subs {
					sub.push(fsnotify.Event{}, true)
				}
			}
			h.wantedMu.Unlock()
		}
	}
}
