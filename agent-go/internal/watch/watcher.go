package watch

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/outpost-dev/outpost/agent-go/internal/errno"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// Durable's timings and limits.
const (
	// DebounceDelay is how long after the first native event of a burst the rescan runs (leading edge: later
	// events of the burst do not extend it).
	DebounceDelay = 50 * time.Millisecond
	// SettleDelay is the rescan after installing watchers on macOS, whose notifications go live late.
	SettleDelay = 500 * time.Millisecond
	// DefaultPollInterval is the time between snapshots in polling mode.
	DefaultPollInterval = 2000 * time.Millisecond
	// DefaultMaxDirectories is the directory budget of one watcher.
	DefaultMaxDirectories = 10_000
	// syncRounds bounds the rescans of one sync (each round that adds watchers rescans).
	syncRounds = 10
)

// Watching modes.
const (
	ModeNative  = "native"
	ModePolling = "polling"
)

// Options configure one watcher.
type Options struct {
	// Mode forces "native" or "polling"; "" chooses (polling on Windows and unreliable file systems).
	Mode string
	// PollInterval is the time between the end of one polling rescan and the start of the next.
	PollInterval time.Duration
	// MaxDirectories is the budget: more directories than this fail the watcher.
	MaxDirectories int64
	// NativeLimit is a test hook: when > 0, installing native watcher number NativeLimit+1 fails as if the
	// kernel had run out of watches (ENOSPC), which switches the watcher to polling.
	NativeLimit int
	// Hub is the fsnotify instance to share; nil gives the watcher one of its own.
	Hub *Hub
}

// Change is one delivery to the watcher's owner: changed paths, a switch to polling (overflow), or the final
// error (Code "permission_denied" or "invalid").
type Change struct {
	Paths    []string
	Overflow bool
	Code     string
	Message  string
}

// Watcher is a port of Durable's NodeFileWatcher. Its state belongs to one loop goroutine (started by openWatcher and
// joined by Close); deliveries happen on that goroutine, or on openWatcher's caller while opening.
type Watcher struct {
	targets []target
	opts    Options
	deliver func(Change)
	quit    func() bool

	mode    atomic.Value // string
	closed  atomic.Bool
	snap    snapshot
	linked  map[string]bool
	natives natives
	ownHub  bool
	pending map[string]bool

	// timer is the single timer slot: the debounced flush in native mode, the poll in polling mode.
	timer  *time.Timer
	settle *time.Timer

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// openWatcher establishes coverage of the targets (one sync without reporting) and starts watching. quit, when it
// reports true, abandons an opening in progress. A tree over the budget fails with EINVAL "Watched paths exceed
// N directories"; a target that cannot be read for lack of permission fails with its system error.
func openWatcher(targets []target, opts Options, deliver func(Change), quit func() bool) (*Watcher, error) {
	w := &Watcher{
		targets: targets,
		opts:    opts,
		deliver: deliver,
		quit:    quit,
		snap:    snapshot{},
		linked:  map[string]bool{},
		pending: map[string]bool{},
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	hub := opts.Hub
	if hub == nil {
		hub, w.ownHub = NewHub(), true
	}
	w.natives = newNatives(hub, opts.NativeLimit)
	w.mode.Store(w.chooseMode())
	if _, err := w.sync(false); err != nil {
		w.closed.Store(true)
		w.stopTimers()
		w.releaseNatives()
		var budget budgetError
		if errors.As(err, &budget) {
			return nil, proto.Invalid(budget.Error())
		}
		return nil, err
	}
	if w.Mode() == ModePolling {
		w.armPoll()
	}
	go w.loop()
	return w, nil
}

// Mode is the current mode; native watching can switch to polling at run time.
func (w *Watcher) Mode() string { return w.mode.Load().(string) }

// Done is closed when the watcher has stopped (closed, or after delivering its final error).
func (w *Watcher) Done() <-chan struct{} { return w.done }

// Close stops the watcher and waits for its loop; no delivery starts after it returns. Idempotent.
func (w *Watcher) Close() {
	w.closeOnce.Do(func() {
		w.closed.Store(true)
		close(w.stop)
	})
	<-w.done
}

func (w *Watcher) chooseMode() string {
	switch w.opts.Mode {
	case ModeNative, ModePolling:
		return w.opts.Mode
	}
	paths := make([]string, len(w.targets))
	for i, t := range w.targets {
		paths[i] = t.path
	}
	if pollsByDefault(paths) {
		return ModePolling
	}
	return ModeNative
}

func (w *Watcher) stopped() bool { return w.closed.Load() || (w.quit != nil && w.quit()) }

// loop serves native events and timers until the watcher stops.
func (w *Watcher) loop() {
	defer close(w.done)
	defer w.releaseNatives()
	defer w.stopTimers()
	for !w.closed.Load() {
		select {
		case <-w.stop:
			return
		case <-w.natives.inbox.signal:
			events, rescan := w.natives.inbox.take()
			for _, event := range events {
				w.onEvent(event)
			}
			if rescan {
				// The kernel's queue overflowed: a rescan finds what was missed.
				w.scheduleFlush()
			}
		case <-timerChannel(w.timer):
			w.timer = nil
			w.flush()
		case <-timerChannel(w.settle):
			w.settle = nil
			w.flush()
		}
	}
}

// releaseNatives removes every native watcher, and ends the hub if it is the watcher's own.
func (w *Watcher) releaseNatives() {
	w.natives.closeAll()
	if w.ownHub {
		w.natives.hub.Close()
	}
}

func timerChannel(t *time.Timer) <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.C
}

// onEvent handles one native event; its kind (create, write, rename, ...) does not matter, only where it
// happened. A path concerning some target is remembered for the next delivery; such a path, or an event about a
// watched path itself, schedules a rescan. Events about unrelated siblings of ancestors or excluded entries are
// ignored.
func (w *Watcher) onEvent(event fsnotify.Event) {
	if w.closed.Load() || w.Mode() == ModePolling {
		return
	}
	// Node's fs.watch hands over the file name decoded; the watched paths themselves are valid UTF-8 already.
	path := nodeName(event.Name)
	relevant := false
	for _, t := range w.targets {
		if t.covers(path) {
			relevant = true
			break
		}
	}
	if relevant {
		w.pending[reported(path, w.targets)] = true
	}
	_, watched := w.natives.watched[event.Name]
	if watched && event.Op&(fsnotify.Remove|fsnotify.Rename) != 0 {
		// A watched path was removed or moved: the kernel's watch is gone or follows the moved directory, so it
		// is dropped (Node's watcher error) and the rescan installs one on whatever is there now. This matters
		// when a new directory gets the removed one's inode number, so its identity looks unchanged.
		w.natives.remove(event.Name)
	}
	if relevant || watched {
		w.scheduleFlush()
	}
}

// scheduleFlush starts the debounce timer unless one is pending; in polling mode the poll owns the timer slot.
func (w *Watcher) scheduleFlush() {
	if w.timer != nil || w.Mode() == ModePolling {
		return
	}
	w.timer = time.NewTimer(DebounceDelay)
}

// armPoll (re)starts the poll timer in the timer slot.
func (w *Watcher) armPoll() {
	if w.timer != nil {
		w.timer.Stop()
	}
	w.timer = time.NewTimer(w.opts.PollInterval)
}

func (w *Watcher) stopTimers() {
	for _, t := range []*time.Timer{w.timer, w.settle} {
		if t != nil {
			t.Stop()
		}
	}
	w.timer, w.settle = nil, nil
}

// flush rescans, adds the paths of the events since the last flush, and delivers the result if it is not
// empty. A failure is delivered as the final error and stops the watcher.
func (w *Watcher) flush() {
	events := w.pending
	w.pending = map[string]bool{}
	changed, err := w.sync(true)
	if err != nil {
		w.fail(err)
		return
	}
	for path := range events {
		changed[path] = true
	}
	if len(changed) > 0 {
		w.send(Change{Paths: sortedPaths(changed)})
	}
	if w.Mode() == ModePolling && !w.closed.Load() {
		w.armPoll()
	}
}

// sync rescans until no new native watcher is installed (at most syncRounds times), so entries written into a
// new directory before its watcher existed are still seen. It returns what changed (when reporting).
func (w *Watcher) sync(report bool) (map[string]bool, error) {
	changed := map[string]bool{}
	for range syncRounds {
		if w.stopped() {
			break
		}
		result, err := newScanner(w.targets, w.Mode() == ModePolling, w.opts.MaxDirectories, w.stopped).scan()
		if errors.Is(err, errScanStopped) || w.stopped() {
			break
		}
		if err != nil {
			return nil, err
		}
		if report {
			diff(w.snap, result.entries, w.targets, changed)
		}
		w.snap, w.linked = result.entries, result.linkedFiles
		if w.Mode() == ModePolling || !w.reconcile() {
			break
		}
		if runtime.GOOS == "darwin" {
			if w.settle != nil {
				w.settle.Stop()
			}
			w.settle = time.NewTimer(SettleDelay)
		}
		report = true
	}
	return changed, nil
}

// reconcile installs the native watchers the snapshot needs and removes stale ones; it reports whether any was
// added. Running out of native watches switches to polling.
func (w *Watcher) reconcile() bool {
	added, err := w.natives.reconcile(w.wanted(), w.snap)
	if err != nil {
		w.switchToPolling()
		return false
	}
	return added
}

// wanted lists the paths needing a native watcher: linked-file targets (a watch on the link watches the file),
// every ancestor directory of every target, each directory target, and every directory below a recursive one.
func (w *Watcher) wanted() map[string]bool {
	wanted := map[string]bool{}
	for path := range w.linked {
		wanted[path] = true
	}
	for _, t := range w.targets {
		for _, ancestor := range ancestors(t.path) {
			if w.snap[ancestor].kind == kindDirectory {
				wanted[ancestor] = true
			}
		}
		if w.snap[t.path].kind != kindDirectory {
			continue
		}
		wanted[t.path] = true
		if !t.recursive {
			continue
		}
		for path, e := range w.snap {
			if e.kind == kindDirectory && path != t.path && within(path, t.path) {
				wanted[path] = true
			}
		}
	}
	return wanted
}

// switchToPolling is what running out of native watches does: every native watcher closes, the owner hears an
// overflow, and polling starts.
func (w *Watcher) switchToPolling() {
	w.mode.Store(ModePolling)
	w.natives.closeAll()
	w.send(Change{Overflow: true})
	w.armPoll()
}

// fail delivers the final error and stops the watcher for good: permission_denied for EACCES/EPERM, invalid for
// anything else (the budget included), with the error's message.
func (w *Watcher) fail(err error) {
	code := "invalid"
	if c := errno.Code(err); c == "EACCES" || c == "EPERM" {
		code = "permission_denied"
	}
	w.send(Change{Code: code, Message: err.Error()})
	w.closeOnce.Do(func() {
		w.closed.Store(true)
		close(w.stop)
	})
}

// send delivers a change unless the watcher is closed.
func (w *Watcher) send(change Change) {
	if w.closed.Load() {
		return
	}
	w.deliver(change)
}
