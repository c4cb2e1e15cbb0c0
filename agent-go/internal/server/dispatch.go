package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/outpost-dev/outpost/agent-go/internal/bufpool"
	"github.com/outpost-dev/outpost/agent-go/internal/frame"
	"github.com/outpost-dev/outpost/agent-go/internal/output"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// job is one request waiting for a pool worker.
type job struct {
	call    *proto.Call
	handler proto.Handler
}

// readLoop reads frames until the input ends or breaks, or the connection is stopping. It is the only sender on
// s.jobs and closes it on return, which lets the workers finish.
func (s *server) readLoop(in io.Reader) error {
	defer close(s.jobs)
	frames := frame.NewReader(countingReader{in: in, s: s})
	frames.Alloc = bufpool.Get
	for {
		f, err := frames.Next()
		if s.isStopping() {
			return nil
		}
		if err != nil {
			return err
		}
		switch f.Type {
		case frame.Request:
			// The reader holds here while the requests in progress hold the whole budget (backpressure).
			size := int64(len(f.JSON) + len(f.Payload))
			if !s.reserve(size) {
				continue // stopping: the frame is dropped, and the next read ends the loop
			}
			s.request(f, size)
		case frame.Cancel:
			s.cancel(f)
		}
		// Other frame types (pings, and anything a client should not send) are ignored.
	}
}

// request registers the request's control, then routes it. Registration comes first so that a cancel read
// right behind the request always finds the control. The frame's size bytes of the payload budget are
// returned when the call is released (by its handler once parsed, at the latest when it finishes).
func (s *server) request(f frame.Frame, size int64) {
	call := &proto.Call{ID: f.ID, Args: f.JSON, Payload: f.Payload, Control: proto.NewControl(),
		OnRelease: func() { s.budget.release(size) }}
	call.Events = &emitter{s: s, call: call}
	s.register(call)

	op, failure := parseRequest(f.JSON)
	call.Op = op
	if s.answersSoon(call) {
		s.answering.Add(1)
	}
	if recyclesBody[op] {
		// These handlers are done with the frame once it is released: its memory can serve the next frame.
		call.OnRelease = func() {
			s.budget.release(size)
			bufpool.Put(f.Body)
		}
	}
	if failure != nil {
		s.finish(call, proto.Reply{}, failure)
		return
	}
	switch {
	case op == "hello":
		s.finish(call, s.hello(), nil)
	case op == "writeChunk" && s.cfg.Files != nil:
		s.writeChunk(call)
	case s.dedicated[op] != nil:
		s.spawn(call, s.dedicated[op])
	case s.pool[op] != nil:
		s.enqueue(job{call: call, handler: s.pool[op]})
	default:
		s.finish(call, proto.Reply{}, proto.Invalid("unknown operation "+op))
	}
}

// answersSoon reports whether a request is answered as soon as its handler returns (every request but the
// long-lived ones on goroutines of their own: exec, watch, listFiles); those are counted in s.answering.
func (s *server) answersSoon(call *proto.Call) bool { return s.dedicated[call.Op] == nil }

// recyclesBody lists the ops whose handlers keep no reference to the request's JSON or payload once the call is
// released (the bulk writes, whose 512 KiB bodies are worth reusing).
var recyclesBody = map[string]bool{"write": true, "writeChunk": true}

// parseRequest checks that a request's JSON is an object and returns its op. Every request passes here, so the
// usual shape (a valid object whose keys have no escapes) is scanned without building a map of its fields.
func parseRequest(raw []byte) (string, *proto.Failure) {
	if !json.Valid(raw) {
		return "", proto.Invalid("invalid JSON")
	}
	rawOp, found, ok := topLevelOp(raw)
	if !ok {
		return parseRequestSlowly(raw)
	}
	if !found {
		return "", proto.Invalid("unknown operation undefined")
	}
	return opName(rawOp)
}

// parseRequestSlowly is parseRequest by way of a full decode, for what the scanner leaves alone (keys with
// escapes, JSON that is not an object).
func parseRequestSlowly(raw []byte) (string, *proto.Failure) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return "", proto.Invalid("invalid JSON")
	}
	rawOp, ok := fields["op"]
	if !ok {
		return "", proto.Invalid("unknown operation undefined")
	}
	return opName(rawOp)
}

// opName decodes the raw value of "op", which must be a string.
func opName(rawOp []byte) (string, *proto.Failure) {
	if len(rawOp) >= 2 && rawOp[0] == '"' {
		text := rawOp[1 : len(rawOp)-1]
		if bytes.IndexByte(text, '\\') < 0 && utf8.Valid(text) {
			return string(text), nil
		}
	}
	var op string
	if len(rawOp) == 0 || rawOp[0] != '"' || json.Unmarshal(rawOp, &op) != nil {
		return "", proto.Invalid("unknown operation " + string(rawOp))
	}
	return op, nil
}

// cancel flips the control of a running request; cancels for unknown ids are ignored.
func (s *server) cancel(f frame.Frame) {
	s.controlsMu.Lock()
	ctl := s.controls[f.ID]
	s.controlsMu.Unlock()
	if ctl == nil {
		return
	}
	var fields struct {
		Mode any `json:"mode"`
	}
	// A cancel whose JSON does not parse still cancels: it can only mean the plain abort.
	_ = json.Unmarshal(f.JSON, &fields)
	if fields.Mode == "kill" {
		ctl.Kill()
	} else {
		ctl.Abort()
	}
}

func (s *server) register(call *proto.Call) {
	s.controlsMu.Lock()
	defer s.controlsMu.Unlock()
	s.controls[call.ID] = call.Control
}

// unregister removes the call's control unless a later request reused its id.
func (s *server) unregister(call *proto.Call) {
	s.controlsMu.Lock()
	defer s.controlsMu.Unlock()
	if s.controls[call.ID] == call.Control {
		delete(s.controls, call.ID)
	}
}

// enqueue hands a job to the pool; while the queue is full the reader waits here (backpressure).
func (s *server) enqueue(j job) {
	select {
	case s.jobs <- j:
		return
	default:
	}
	s.blocked.Add(1)
	defer s.blocked.Add(-1)
	select {
	case s.jobs <- j:
	case <-s.stopping:
	}
}

// writeChunk hands a chunk to the file operations from the reader goroutine, so chunks keep arrival order.
// Its frame stays in the payload budget until the chunk is written.
func (s *server) writeChunk(call *proto.Call) {
	var once sync.Once
	done := func(reply proto.Reply, err error) {
		once.Do(func() { s.finish(call, reply, err) })
	}
	defer func() {
		if r := recover(); r != nil {
			done(proto.Reply{}, s.panicFailure(call.Op, r))
		}
	}()
	s.cfg.Files.WriteChunk(call, done)
}

// reserve waits until the payload budget has room for size bytes and takes them; it returns false when the
// connection stops first.
func (s *server) reserve(size int64) bool {
	room, ok := s.budget.reserve(size)
	if ok {
		return true
	}
	s.blocked.Add(1)
	defer s.blocked.Add(-1)
	for {
		select {
		case <-room:
		case <-s.stopping:
			return false
		}
		if room, ok = s.budget.reserve(size); ok {
			return true
		}
	}
}

// payloadBudget counts the bytes of the request frames read and not yet released: every request's JSON and
// payload, from the moment the reader decoded it until its handler let go of it.
type payloadBudget struct {
	limit int64

	mu     sync.Mutex
	queued int64
	// room is closed and replaced whenever bytes are released, waking a waiting reader.
	room chan struct{}
}

// reserve takes size bytes if they fit, and otherwise returns a channel closed at the next release. A frame
// larger than the whole limit is let through once nothing else is held, so it cannot wait forever.
func (b *payloadBudget) reserve(size int64) (<-chan struct{}, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.queued == 0 || b.queued+size <= b.limit {
		b.queued += size
		return nil, true
	}
	return b.room, false
}

// release returns size bytes to the budget.
func (b *payloadBudget) release(size int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.queued -= size
	close(b.room)
	b.room = make(chan struct{})
}

// spawn runs a long-lived operation (exec, watch) on a goroutine of its own.
func (s *server) spawn(call *proto.Call, handler proto.Handler) {
	if s.running.Add(1) > int64(s.cfg.MaxDedicated) {
		s.running.Add(-1)
		s.finish(call, proto.Reply{}, &proto.Failure{Code: "spawn_error",
			Message: fmt.Sprintf("too many running operations (at most %d)", s.cfg.MaxDedicated)})
		return
	}
	started := s.goTask(func() {
		defer s.running.Add(-1)
		reply, err := s.run(handler, call)
		s.finish(call, reply, err)
	})
	if !started {
		// Shutting down: the operation never starts and nobody can read its reply.
		s.running.Add(-1)
		call.Release()
	}
}

// work serves pool jobs until the reader closes the queue or the connection stops (the reader may stay blocked
// in a read of the input after that).
func (s *server) work() {
	for {
		var j job
		var ok bool
		select {
		case j, ok = <-s.jobs:
		case <-s.stopping:
			return
		}
		if !ok || s.isStopping() {
			return
		}
		reply, err := s.run(j.handler, j.call)
		s.finish(j.call, reply, err)
	}
}

// run calls a handler and turns a panic into an "unknown" failure, so one broken handler cannot take the
// connection down.
func (s *server) run(handler proto.Handler, call *proto.Call) (reply proto.Reply, err error) {
	defer func() {
		if r := recover(); r != nil {
			reply, err = proto.Reply{}, s.panicFailure(call.Op, r)
		}
	}()
	return handler(call)
}

// panicFailure reports a handler's panic: the stack goes to the log for the operator, a short message to the
// client.
func (s *server) panicFailure(op string, r any) *proto.Failure {
	fmt.Fprintf(s.cfg.Log, "outpost: panic in %s: %v\n%s", op, r, debug.Stack())
	return &proto.Failure{Code: "unknown", Message: fmt.Sprintf("internal error in %s: %v", op, r)}
}

// finish builds the request's final frame, drops its control and queues the frame. Results go to the bulk
// queue when the handler asks for it, when the payload is large, or when the request sent bulk events (so the
// final frame follows its own output); errors likewise follow bulk events.
//
// The reply to the only request in flight is written at once by the goroutine that made it (Writer.SendNow), the
// usual case of a client that awaits each call; replies that have company go through the writer, which sends
// the ones waiting together. Long-lived operations do not count as company: a running watch or command has its
// events queued anyway.
func (s *server) finish(call *proto.Call, reply proto.Reply, err error) {
	call.Release()
	f, bulk := s.replyFrame(call, reply, err)
	s.unregister(call)
	alone := s.answersSoon(call) && s.answering.Add(-1) == 0
	queue := proto.ControlQueue
	if bulk || call.Events.(*emitter).usedBulk.Load() {
		queue = proto.BulkQueue
	}
	if queue == proto.BulkQueue && len(f.Payload) > ControlPayload {
		// A big payload waits for room like command output does, so pool workers cannot pile up bulk data.
		if s.out.WaitForRoom(s.stopping) != nil {
			return
		}
	}
	var sendErr error
	if alone && queue == proto.ControlQueue {
		sendErr = s.out.SendNow(f)
	} else {
		sendErr = s.out.Send(queue, f, nil)
	}
	if errors.Is(sendErr, frame.ErrTooLarge) {
		// Never lose the request: a reply that cannot be framed becomes an error.
		f, _ = s.replyFrame(call, proto.Reply{}, &proto.Failure{Code: "unknown",
			Message: fmt.Sprintf("reply to %s exceeds the frame limit", call.Op)})
		_ = s.out.Send(queue, f, nil)
	}
	// Any other error means the output is closed: nobody can receive the reply any more.
}

// replyFrame encodes a handler's outcome; it reports whether the reply asks for the bulk queue.
func (s *server) replyFrame(call *proto.Call, reply proto.Reply, err error) (frame.Frame, bool) {
	if err != nil {
		return frame.Frame{Type: frame.Error, ID: call.ID, JSON: failureJSON(err)}, false
	}
	raw, mErr := resultJSON(reply.JSON)
	if mErr != nil {
		failure := &proto.Failure{Code: "unknown", Message: fmt.Sprintf("encode %s result: %v", call.Op, mErr)}
		return frame.Frame{Type: frame.Error, ID: call.ID, JSON: failureJSON(failure)}, false
	}
	bulk := reply.Bulk || len(reply.Payload) > ControlPayload
	return frame.Frame{Type: frame.Result, ID: call.ID, JSON: raw, Payload: reply.Payload, Written: reply.Written}, bulk
}

// emptyResult is the JSON of a result without fields.
var emptyResult = []byte("{}")

// resultJSON encodes a result's JSON. JSON the agent encoded itself (hello's, encoded once) and empty results go
// out as they are: re-encoding would only validate and copy them, once per request.
func resultJSON(body any) ([]byte, error) {
	switch v := body.(type) {
	case nil, struct{}:
		return emptyResult, nil
	case json.RawMessage:
		return v, nil
	case proto.JSONAppender:
		return v.AppendJSON(make([]byte, 0, 160)), nil
	}
	return json.Marshal(body)
}

// failureJSON encodes an error frame's object; errors that are not failures are reported as "unknown".
func failureJSON(err error) []byte {
	var failure *proto.Failure
	if !errors.As(err, &failure) {
		failure = &proto.Failure{Code: "unknown", Message: err.Error()}
	}
	raw, mErr := json.Marshal(failure.JSON())
	if mErr != nil {
		// Only an unencodable extra field can get here; the code and message always encode.
		raw, _ = json.Marshal(map[string]string{"code": failure.Code, "message": failure.Message})
	}
	return raw
}

// emitter sends a running request's events.
type emitter struct {
	s        *server
	call     *proto.Call
	unsent   output.Counter
	usedBulk atomic.Bool
}

// Emit queues an event frame. A bulk event first waits while the bulk queue is over its limit, unless the
// request has been cancelled (then it is stopping and must not stall).
func (e *emitter) Emit(queue proto.Queue, event map[string]any, payload []byte) error {
	raw, err := json.Marshal(event)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", e.call.Op, err)
	}
	f := frame.Frame{Type: frame.Event, ID: e.call.ID, JSON: raw, Payload: payload}
	if queue == proto.BulkQueue {
		e.usedBulk.Store(true)
		if err := e.waitForRoom(); err != nil {
			return err
		}
		// Bulk events of one request (command output) may be joined while they wait; equal JSON keeps each
		// stream's text apart and in order.
		return e.s.out.SendMerging(queue, f, &e.unsent, e)
	}
	return e.s.out.Send(queue, f, &e.unsent)
}

// Unsent reports how many of this request's event frames are not written yet.
func (e *emitter) Unsent() int { return e.unsent.Unsent() }

func (e *emitter) waitForRoom() error {
	ctl := e.call.Control
	for {
		changed := ctl.Changed()
		if ctl.Aborted() || ctl.Killed() {
			return nil
		}
		if err := e.s.out.WaitForRoom(changed); err != nil {
			return err
		}
		select {
		case <-changed:
			// A flag changed: loop to see whether the request is stopping.
		default:
			return nil
		}
	}
}
