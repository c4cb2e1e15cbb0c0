// Package proto holds the types shared by the agent's request handlers and its server: a request as a handler
// sees it, the control a cancel frame flips, and the failure shape every error frame carries.
//
// Handlers (file operations, exec, watch) depend only on this package, never on the server, so each concern can
// be built and tested on its own.
package proto

import (
	"encoding/json"
	"errors"
	"sync"
)

// Failure is the JSON of an error frame: a Node/libuv-style code plus a Node-format message. Only codes are
// contract; messages are diagnostic but imitate Node's so tools show the same text.
type Failure struct {
	Code    string
	Message string
	Syscall string
	Path    string
	// HasPath is true when Path must be sent even if empty.
	HasPath bool
	// Extra fields merged into the error JSON (e.g. spillPath on a timeout).
	Extra map[string]any
}

// Error implements error.
func (f *Failure) Error() string { return f.Message }

// JSON returns the error frame's object.
func (f *Failure) JSON() map[string]any {
	out := make(map[string]any, 4+len(f.Extra))
	for k, v := range f.Extra {
		out[k] = v
	}
	out["code"] = f.Code
	out["message"] = f.Message
	if f.Syscall != "" {
		out["syscall"] = f.Syscall
	}
	if f.Path != "" || f.HasPath {
		out["path"] = f.Path
	}
	return out
}

// Invalid builds an EINVAL failure for a malformed request.
func Invalid(message string) *Failure {
	return &Failure{Code: "EINVAL", Message: message}
}

// Aborted builds the failure of a request its cancel frame stopped.
func Aborted(message string) *Failure {
	return &Failure{Code: "aborted", Message: message}
}

// Control is what a cancel frame reaches. It is registered before the request is queued, so a cancel right
// behind its request is never lost.
type Control struct {
	mu      sync.Mutex
	aborted bool
	killed  bool
	// changed is closed and replaced on every flag change, so waiters can select on it.
	changed chan struct{}
}

// NewControl returns a control with no flag set.
func NewControl() *Control { return &Control{changed: make(chan struct{})} }

// Abort sets the aborted flag (a cancel frame without mode).
func (c *Control) Abort() { c.set(func() { c.aborted = true }) }

// Kill sets the killed flag (a cancel frame with mode "kill").
func (c *Control) Kill() { c.set(func() { c.killed = true }) }

func (c *Control) set(change func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	change()
	close(c.changed)
	c.changed = make(chan struct{})
}

// Aborted reports whether the request was cancelled.
func (c *Control) Aborted() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.aborted
}

// Killed reports whether a kill-mode cancel arrived.
func (c *Control) Killed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.killed
}

// Changed returns a channel closed at the next flag change.
func (c *Control) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// Queue says which output queue a frame goes to. Control frames are always written before bulk frames.
type Queue int

const (
	// ControlQueue carries results, errors, pings and watch events.
	ControlQueue Queue = iota
	// BulkQueue carries command output, command results and large payloads.
	BulkQueue
)

// ErrOutputClosed is the error of a frame offered after the agent's output closed (the connection is ending).
var ErrOutputClosed = errors.New("output closed")

// Emitter sends event frames for a running request (exec output, watch changes).
type Emitter interface {
	// Emit queues an event frame; it blocks while the bulk queue is over its limit (backpressure) unless the
	// request is stopping. After the output closed it fails with an error that wraps ErrOutputClosed.
	Emit(queue Queue, event map[string]any, payload []byte) error
	// Unsent reports how many event frames of this request are queued but not yet written.
	Unsent() int
}

// Call is one request as a handler sees it.
type Call struct {
	ID      uint32
	Op      string
	Args    json.RawMessage
	Payload []byte
	Control *Control
	Events  Emitter

	// OnRelease, when set, is called once by Release (the server returns the frame's bytes to its budget).
	OnRelease   func()
	releaseOnce sync.Once
}

// Aborted reports whether a cancel frame reached the call (a call made without a Control never is).
func (c *Call) Aborted() bool { return c.Control != nil && c.Control.Aborted() }

// Release drops the request's frame (Args and Payload) and returns its bytes to the connection's payload
// budget. A handler that runs long (exec) calls it as soon as it has parsed what it needs; the server calls it
// when the request finishes. Calls after the first do nothing.
func (c *Call) Release() {
	c.releaseOnce.Do(func() {
		c.Args, c.Payload = nil, nil
		if c.OnRelease != nil {
			c.OnRelease()
		}
	})
}

// Decode unmarshals the request's JSON into v; a malformed request yields an EINVAL failure.
func (c *Call) Decode(v any) *Failure {
	if len(c.Args) == 0 {
		return nil
	}
	if err := json.Unmarshal(c.Args, v); err != nil {
		return Invalid("invalid request for " + c.Op + ": " + err.Error())
	}
	return nil
}

// Reply is a handler's successful answer: a JSON object and an optional raw payload.
type Reply struct {
	JSON    any
	Payload []byte
	// Bulk routes the result to the bulk queue (exec results follow their output there).
	Bulk bool
	// Written, when set, is called once the reply's frame was written or dropped (the payload's memory may be
	// recycled then); a reply that never reaches the writer may never call it.
	Written func()
}

// JSONAppender is a result that encodes itself without reflection: AppendJSON appends exactly the JSON
// json.Marshal would produce for it. The server uses it for results that are sent very often.
type JSONAppender interface {
	AppendJSON(dst []byte) []byte
}

// Handler serves one operation. A returned error that is not a *Failure is reported as code "unknown".
type Handler func(call *Call) (Reply, error)
