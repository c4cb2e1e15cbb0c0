package watch

import (
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// Hub is one fsnotify instance (one inotify descriptor) shared by the watchers of a connection, as Node shares one
// per process: a kernel limit on instances (128 per user by default on Linux) must not cap how many watchers a
// client opens. Each path is watched once however many watchers want it; events go to every watcher that wants the
// path or its parent directory, and each watcher decides what concerns it.
type Hub struct {
	// fsMu serializes the changes of kernel watches (and the hub's start and end), so that the watches always
	// match wanted; dispatch takes only wantedMu, briefly, so fsnotify's reader is never held up behind a change.
	fsMu     sync.Mutex
	fs       *fsnotify.Watcher
	closed   bool
	wantedMu sync.Mutex
	wanted   map[string]map[*subscriber]bool
	running  sync.WaitGroup
}

// NewHub returns a hub; the fsnotify instance is made on the first watch.
func NewHub() *Hub { return &Hub{wanted: map[string]map[*subscriber]bool{}} }

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

// add watches path for sub. The kernel watch is (re)made even when another watcher has the path, so it follows
// whatever is at the path now (a directory replaced since gets watched instead of the old one).
func (h *Hub) add(sub *subscriber, path string) error {
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
	return nil
}

// remove drops sub's interest in path; the kernel watch goes when nobody wants the path any more.
func (h *Hub) remove(sub *subscriber, path string) {
	h.fsMu.Lock()
	defer h.fsMu.Unlock()
	if h.dropInterest(sub, path) && h.fs != nil {
		// An error means the kernel dropped the watch already (the directory was deleted): nothing left to do.
		_ = h.fs.Remove(path)
	}
}

// dropInterest forgets that sub wants path; it reports whether nobody wants it any more.
func (h *Hub) dropInterest(sub *subscriber, path string) bool {
	h.wantedMu.Lock()
	defer h.wantedMu.Unlock()
	subs := h.wanted[path]
	if !subs[sub] {
		return false
	}
	delete(subs, sub)
	if len(subs) > 0 {
		return false
	}
	delete(h.wanted, path)
	return true
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
			for _, path := range []string{event.Name, filepath.Dir(event.Name)} {
				for sub := range h.wanted[path] {
					sub.push(event, false)
				}
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
