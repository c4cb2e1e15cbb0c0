// Package watch serves protocol 1's `watch` op with a port of Durable's NodeFileWatcher that runs next to the
// files: snapshots of every target (ancestors by identity, directories by identity, small recent files by
// content hash when polling), native events (fsnotify) that only trigger a debounced rescan, polling on Windows
// and on network or FUSE file systems, a switch to polling with an overflow when native watches run out, and a
// directory budget. Each watcher works on a goroutine of its own, off the request path; the watchers of a
// connection share one fsnotify instance (Hub).
package watch

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/outpost-dev/outpost/agent-go/internal/frame"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// Service runs the watchers of one connection; they share one fsnotify instance.
type Service struct {
	hub      *Hub
	mu       sync.Mutex
	stopping chan struct{}
	stopped  bool
	running  sync.WaitGroup
}

// New returns a service with no watcher.
func New() *Service { return &Service{hub: NewHub(), stopping: make(chan struct{})} }

// Handle serves one `watch` request until it is cancelled, the watcher fails, or the service stops: events
// `{kind:"ready", mode}`, then `{kind:"change", ...}` and at most one `{kind:"error", code, message}`; the result
// is `{}`. A watcher that cannot be established fails the request instead.
func (s *Service) Handle(call *proto.Call) (proto.Reply, error) {
	if !s.enter() {
		return proto.Reply{}, nil
	}
	defer s.running.Done()
	targets, opts, failure := parseRequest(call)
	if failure != nil {
		return proto.Reply{}, failure
	}
	opts.Hub = s.hub
	ctl := call.Control
	events := &eventSender{emitter: call.Events, lost: make(chan struct{})}
	quit := func() bool { return ctl.Aborted() || s.isStopping() || events.broken.Load() }
	w, err := openWatcher(targets, opts, events.change, quit)
	if err != nil {
		return proto.Reply{}, err
	}
	defer w.Close()
	if quit() {
		return proto.Reply{}, nil
	}
	if err := call.Events.Emit(proto.ControlQueue, map[string]any{"kind": "ready", "mode": w.Mode()}, nil); err != nil {
		return proto.Reply{}, nil
	}
	for {
		changed := ctl.Changed()
		if quit() {
			return proto.Reply{}, nil
		}
		select {
		case <-changed:
		case <-w.Done():
			return proto.Reply{}, nil
		case <-s.stopping:
			return proto.Reply{}, nil
		case <-events.lost:
			return proto.Reply{}, nil
		}
	}
}

// CloseAll stops every watcher and waits for their requests to end; later requests end at once. The server's
// owner calls it when the connection ends.
func (s *Service) CloseAll() {
	s.mu.Lock()
	if !s.stopped {
		s.stopped = true
		close(s.stopping)
	}
	s.mu.Unlock()
	s.running.Wait()
	s.hub.Close()
}

func (s *Service) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return false
	}
	s.running.Add(1)
	return true
}

func (s *Service) isStopping() bool {
	select {
	case <-s.stopping:
		return true
	default:
		return false
	}
}

// eventSender turns a watcher's changes into event frames. A change too large for one frame is sent as an
// overflow (the client rescans), so it never ends the connection; an output that cannot be written any more (the
// connection is ending) stops the watcher.
type eventSender struct {
	emitter  proto.Emitter
	broken   atomic.Bool
	lost     chan struct{}
	lostOnce sync.Once
}

func (e *eventSender) change(c Change) {
	var event map[string]any
	switch {
	case c.Code != "":
		event = map[string]any{"kind": "error", "code": c.Code, "message": c.Message}
	case c.Overflow:
		event = map[string]any{"kind": "change", "overflow": true, "mode": ModePolling}
	default:
		event = map[string]any{"kind": "change", "paths": c.Paths}
	}
	err := e.emitter.Emit(proto.ControlQueue, event, nil)
	if errors.Is(err, frame.ErrTooLarge) {
		err = e.emitter.Emit(proto.ControlQueue, map[string]any{"kind": "change", "overflow": true}, nil)
	}
	if err != nil {
		e.broken.Store(true)
		e.lostOnce.Do(func() { close(e.lost) })
	}
}
