package watch

// identity is what a native watcher was installed on: a directory replaced at the same path gets a new one.
type identity struct {
	dev, ino uint64
}

// natives is the set of native watchers of one watcher: a non-recursive watch per wanted path, held in the
// connection's hub. It is used by the watcher's loop goroutine only.
type natives struct {
	hub     *Hub
	inbox   *subscriber
	watched map[string]identity
	// limit is the test hook: when > 0, installing watch number limit+1 fails as if the kernel had run out.
	limit int
}

func newNatives(hub *Hub, limit int) natives {
	return natives{hub: hub, inbox: newSubscriber(), watched: map[string]identity{}, limit: limit}
}

// errExhausted wraps a failure to install a native watcher that is not a missing or forbidden path.
type errExhausted struct{ cause error }

func (e errExhausted) Error() string { return "native watching failed: " + e.cause.Error() }
func (e errExhausted) Unwrap() error { return e.cause }

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
		if err := n.add(path, identity{e.dev, e.ino}); err != nil {
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

func (n *natives) add(path string, id identity) error {
	if n.limit > 0 && len(n.watched) >= n.limit {
		return errNoWatches
	}
	return n.hub.add(n.inbox, path, id)
}

func (n *natives) remove(path string) {
	delete(n.watched, path)
	n.hub.remove(n.inbox, path)
}

// closeAll removes every watcher.
func (n *natives) closeAll() {
	for path := range n.watched {
		n.remove(path)
	}
}
