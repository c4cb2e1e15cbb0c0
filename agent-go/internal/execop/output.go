package execop

import (
	"errors"
	"sync"
	"time"

	"github.com/outpost-dev/outpost/agent-go/internal/decode"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
	"github.com/outpost-dev/outpost/agent-go/internal/window"
)

// Streams, indexed as the child's pipes are.
const (
	stdout = iota
	stderr
)

var streamNames = [2]string{"stdout", "stderr"}

// maxHeld bounds the undelivered text of a windowed command: what the window holds plus the delivery being
// handed to the connection. Reading pauses at this size until deliveries make room, as a full bulk queue pauses
// unwindowed output (a window whose cap, XW4, is below it keeps omitting text meanwhile). A variable for tests.
var maxHeld int64 = 16 << 20

// output turns a command's raw chunks into output events (decoded per stream), feeds the spill and, with a
// window, holds text for paced delivery. Chunks of both streams pass through one lock, so decoding, spilling
// and delivery happen in arrival order.
type output struct {
	mu       sync.Mutex
	events   proto.Emitter
	decoders [2]*decode.Decoder
	spill    *spill
	win      *window.Window
	// ready wakes the pacer when the window received text; full wakes it from a pause when reading waits for
	// room (maxHeld).
	ready chan struct{}
	full  chan struct{}
	// inflight counts the bytes the pacer took from the window and has not handed to the connection yet.
	inflight int64
	// taken is signalled (with mu) when the pacer handed a delivery to the connection or output stopped; a
	// reader waiting for room in a full window waits on it.
	taken *sync.Cond
	// stopped is set at settle time: later chunks are discarded.
	stopped bool
	// closed is set once the connection's output closed; nothing more is sent and it is no failure.
	closed bool
	// deliveryErr is the first emit failure other than a closed output; nothing more is sent and the command
	// fails. It is read after finish.
	deliveryErr error
	// failure is closed at the first spill or delivery failure, so the command loop can kill the group.
	failure  chan struct{}
	failOnce sync.Once
}

func newOutput(events proto.Emitter, req *request, tmpdir string) *output {
	o := &output{events: events, decoders: [2]*decode.Decoder{decode.NewStream(), decode.NewStream()},
		failure: make(chan struct{})}
	o.taken = sync.NewCond(&o.mu)
	if req.spill != nil {
		o.spill = newSpill(*req.spill, tmpdir, o.fail)
	}
	if req.window != nil {
		o.win = window.New(*req.window)
		o.ready = make(chan struct{}, 1)
		o.full = make(chan struct{}, 1)
	}
	return o
}

// fail wakes the command loop to kill the group (a spill or delivery failure).
func (o *output) fail() { o.failOnce.Do(func() { close(o.failure) }) }

// failed returns a channel closed at the first spill or delivery failure.
func (o *output) failed() <-chan struct{} { return o.failure }

// chunk handles one raw chunk read from a pipe: decode, deliver, then spill (NodeExecutionEnv's order).
// Without a window a delivery may block while the connection's bulk queue is full; with one, the chunk waits
// while maxHeld bytes are undelivered. Either way the socket then fills and the command slows
// down, as behind a slow reader.
func (o *output) chunk(stream int, raw []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for o.win != nil && !o.stopped && o.win.Held()+o.inflight >= maxHeld {
		signal(o.full)
		o.taken.Wait()
	}
	if o.stopped {
		return
	}
	o.deliver(stream, o.decoders[stream].Decode(raw))
	if o.spill != nil {
		o.spill.add(raw)
	}
}

// deliver sends or holds decoded text; empty text is never sent. Called with mu held.
func (o *output) deliver(stream int, text []byte) {
	if len(text) == 0 {
		return
	}
	if o.win != nil {
		o.win.Push(streamNames[stream], text)
		select {
		case o.ready <- struct{}{}:
		default:
		}
		return
	}
	o.emit(window.Delivery{Stream: streamNames[stream], Text: text})
}

// emit sends one output event. A closed output ends sending quietly (the connection is ending and the command
// with it); any other failure ends sending and fails the command, so output is never lost silently. Emit is
// called by one goroutine at a time: the reader without a window, the pacer and then finish with one.
func (o *output) emit(d window.Delivery) {
	if o.closed || o.deliveryErr != nil || o.events == nil {
		return
	}
	event := map[string]any{"kind": "output", "stream": d.Stream}
	if d.Skipped != nil {
		event["skipped"] = d.Skipped
	}
	err := o.events.Emit(proto.BulkQueue, event, d.Text)
	switch {
	case err == nil:
	case errors.Is(err, proto.ErrOutputClosed):
		o.closed = true
	default:
		o.deliveryErr = err
		o.fail()
	}
}

// startPacer starts the windowed delivery loop and returns its stop function (which waits for it).
func (o *output) startPacer() (stop func()) {
	if o.win == nil {
		return func() {}
	}
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		o.pace(quit)
	}()
	return func() {
		close(quit)
		<-done
	}
}

// pace delivers held window text: no earlier than the pause the previous delivery asked for (unless reading
// waits for room), and only once the command's previous output frames have been written.
func (o *output) pace(quit <-chan struct{}) {
	var next time.Time
	for {
		select {
		case <-quit:
			return
		case <-o.ready:
		}
		if !o.pauseUntil(next, quit) {
			return
		}
		for o.events != nil && o.events.Unsent() > 0 {
			if !sleepUntil(time.Now().Add(unsentPoll), quit, nil) {
				return
			}
		}
		// Emit outside the lock so readers never wait for the connection. Only the pacer and, after it
		// stopped, finish emit in windowed mode, so deliveries stay in order.
		o.mu.Lock()
		deliveries := o.win.Take()
		select {
		case <-o.full: // a reader still waiting after this Take signals again
		default:
		}
		for _, d := range deliveries {
			o.inflight += int64(len(d.Text))
		}
		o.mu.Unlock()
		delivered := 0
		for _, d := range deliveries {
			o.emit(d)
			delivered += len(d.Text)
			o.mu.Lock()
			o.inflight -= int64(len(d.Text))
			o.taken.Broadcast()
			o.mu.Unlock()
		}
		next = time.Now().Add(o.win.Pause(delivered))
	}
}

// pauseUntil waits until t, or less once reading waits for room (maxHeld): text the window cannot omit then goes
// out as fast as the connection takes it, as without a window. It returns false when quit closed first.
func (o *output) pauseUntil(t time.Time, quit <-chan struct{}) bool {
	return sleepUntil(t, quit, o.full)
}

// sleepUntil waits until t, or less once wake is closed (a nil wake never is); it returns false when quit closed
// first.
func sleepUntil(t time.Time, quit, wake <-chan struct{}) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-quit:
		return false
	case <-timer.C:
	case <-wake:
	}
	return true
}

// stop discards every chunk from now on (the command settles).
func (o *output) stop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stopped = true
	o.taken.Broadcast()
}

// finish completes the spill, flushes the decoders (stdout first) and delivers what the window still holds.
// It returns the spill failure, if any.
func (o *output) finish() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	var spillErr error
	if o.spill != nil {
		spillErr = o.spill.finish()
	}
	for stream, d := range o.decoders {
		o.deliver(stream, d.Flush())
	}
	if o.win != nil {
		for _, d := range o.win.Take() {
			o.emit(d)
		}
	}
	return spillErr
}

// spillPath returns the spill file, or "" when none was created.
func (o *output) spillPath() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.spill == nil {
		return ""
	}
	return o.spill.path
}
