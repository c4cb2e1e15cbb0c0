// Package reaper keeps a command's descendants from escaping the agent. On Linux the agent becomes the child
// subreaper of everything it starts (PR_SET_CHILD_SUBREAPER): a descendant whose parent exits — one that
// called setsid, or a double fork — is re-parented to the agent instead of to init, so the agent can still
// find it, kill it and reap it. The processes the agent started itself (command leaders, helpers) are
// registered as its own; every other child is "adopted".
//
// Elsewhere there is no subreaper: Become reports false and the agent only ever sees its own children.
package reaper

import "sync"

// registry is the set of the process's own children, and the lock that keeps a sweep from seeing a child
// that was just forked but not registered yet.
var registry = struct {
	lock sync.RWMutex // forks hold it for reading, sweeps for writing
	mu   sync.Mutex   // guards own
	own  map[int]bool
}{own: map[int]bool{}}

// Spawn runs start (a fork: it returns the new child's pid) and registers the child as the process's own, so
// no sweep ever mistakes it for an adopted orphan.
func Spawn(start func() (int, error)) (int, error) {
	registry.lock.RLock()
	defer registry.lock.RUnlock()
	pid, err := start()
	if err == nil {
		registry.mu.Lock()
		registry.own[pid] = true
		registry.mu.Unlock()
	}
	return pid, err
}

// Disown forgets an own child once it has been reaped.
func Disown(pid int) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	delete(registry.own, pid)
}

func isOwn(pid int) bool {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return registry.own[pid]
}

// Sweep reaps the adopted children that have exited and kills, with all their descendants, the adopted
// children for which doomed(startTicks) is true (startTicks is when the child started, in Ticks). It is a
// no-op where there is no subreaper.
func Sweep(doomed func(startTicks uint64) bool) {
	registry.lock.Lock()
	defer registry.lock.Unlock()
	sweep(doomed)
}
