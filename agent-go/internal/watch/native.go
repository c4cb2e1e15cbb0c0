package watch

import "github.com/fsnotify/fsnotify"

// identity is what a native watcher was installed on: a directory replaced at the same path gets a new one.
type identity struct {
	dev, ino uint64
}

// natives is the set of native watchers of one watcher: one fsnotify instance (inotify, kqueue,
// ReadDirectoryChangesW) holding a non-recursive watch per wanted path. It is used by the watcher's loop
// goroutine only; fsnotify's own reader goroutine is joined by close.
type natives struct {
	fs      *fsnotify.Watcher
	watched map[string]identity
	// limit is the test hook: when > 0, installing watch number limit+1 fails as if the kernel had run out.
	limit     int
	installed int
}

// errExhausted wraps a failure to install a native watcher that is not a missing or forbidden path.
type errExhausted struct{ cause error }

func (e errExhausted) Error() string { return "native watching failed: " + e.cause.Error() }
func (e errExhausted) Unwrap() error { return e.cause }

// events and errors of the fsnotify instance; nil channels (never ready) before the first watch.
func (n *natives) events() <-chan fsnotify.Event {
	if n.fs == nil {
		return nil
	}
	return n.fs.Events
}

func (n *natives) errors() <-chan error {
	if n.fs == nil {
		return nil
	}
	return n.fs.Errors
}

// reconcile makes the installed watchers match wanted (paths present in the snapshot): watchers no longer
// wanted, gone from the snapshot or installed on another identity are removed, missing ones installed. It
// reports whether any was added; an errExhausted means native watching cannot go on (switch to polling).
func (n *natives) reconcile(wanted map[string]bool, snap snapshot) (bool, error) {
	for path, id := range n.watched {
		e, present := snap[path]
		if !wanted[path] || !present || (identity{e.dev, e.ino}) != id {
			n.remove(path)
		}
	}
	added := false
	for path := range wanted {
		e, present := snap[path]
		if !present {
			continue
		}
		if _, ok := n.watched[path]; ok {
			continue
		}
		if err := n.add(path); err != nil {
			if isIgnorableWatchError(err) {
				continue
			}
			return added, errExhausted{err}
		}
		n.watched[path] = identity{e.dev, e.ino}
		added = true
	}
	return added, nil
}

func (n *natives) add(path string) error {
	if n.limit > 0 && n.installed >= n.limit {
		return errNoWatches
	}
	if n.fs == nil {
		fs, err := fsnotify.NewWatcher()
		if err != nil {
			return err
		}
		n.fs = fs
	}
	if err := n.fs.Add(path); err != nil {
		return err
	}
	n.installed++
	return nil
}

func (n *natives) remove(path string) {
	delete(n.watched, path)
	n.installed--
	// An error means the kernel dropped the watch already (the directory was deleted): nothing left to do.
	_ = n.fs.Remove(path)
}

// closeAll removes every watcher and ends the fsnotify instance (joining its reader goroutine).
func (n *natives) closeAll() {
	if n.fs != nil {
		_ = n.fs.Close()
		n.fs = nil
	}
	n.watched = map[string]identity{}
	n.installed = 0
}
