// Package output is the agent's single stdout writer. Frames wait in two queues: the control queue (results,
// errors, pings, watch events) is always drained before the bulk queue (command output, command results, large
// payloads), so a chatty command never delays a ping or the answer to a cancel. Bulk bytes are counted so that
// producers can wait for room instead of buffering without bound.
//
// Frames that are waiting together leave together: the writer takes every queued control frame and a bounded
// run of bulk frames, and writes them with one (vectored) system call, large payloads straight from their own
// memory. A burst of a thousand small replies costs one write and one wake-up of the peer, not a thousand.
package output

import (
	"encoding/binary"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outpost-dev/outpost/agent-go/internal/frame"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// Defaults of Config.
const (
	// DefaultBulkLimit is how many unsent bulk bytes make WaitForRoom block.
	DefaultBulkLimit = 4 << 20
	// DefaultControlLimit is how many control frames may wait before Send blocks.
	DefaultControlLimit = 1024
	// DefaultRecheck is how often a blocked WaitForRoom or Send re-checks even without a wake-up.
	DefaultRecheck = 100 * time.Millisecond
	// DefaultBufferSize bounds the bulk bytes written in one batch (a single larger frame still goes whole), so a
	// control frame that arrives meanwhile waits for at most about this much bulk data.
	DefaultBufferSize = 256 << 10
	// maxBatchFrames bounds the frames of one batch, keeping the vector of a vectored write short.
	maxBatchFrames = 256
	// inlinePayload is the largest payload copied into the batch buffer; larger ones are written from their own
	// memory.
	inlinePayload = 16 << 10
	// MaxMergedPayload bounds the payload SendMerging builds by appending to a queued frame.
	MaxMergedPayload = 256 << 10
)

// ErrClosed is returned for frames offered after the writer closed, or after a write error stopped it. It is
// proto.ErrOutputClosed, so handlers can tell it from other failures without depending on this package.
var ErrClosed = proto.ErrOutputClosed

// Config tunes a Writer; zero fields take the defaults.
type Config struct {
	BulkLimit    int
	ControlLimit int
	Recheck      time.Duration
	BufferSize   int
}

// WithDefaults returns the config a Writer runs with: every zero field replaced by its default.
func (c Config) WithDefaults() Config {
	if c.BulkLimit <= 0 {
		c.BulkLimit = DefaultBulkLimit
	}
	if c.ControlLimit <= 0 {
		c.ControlLimit = DefaultControlLimit
	}
	if c.Recheck <= 0 {
		c.Recheck = DefaultRecheck
	}
	if c.BufferSize <= 0 {
		c.BufferSize = DefaultBufferSize
	}
	return c
}

// Counter counts the queued but not yet written frames of one request (proto.Emitter.Unsent).
type Counter struct{ n atomic.Int64 }

// Unsent returns the number of the request's frames still waiting or being written.
func (c *Counter) Unsent() int { return int(c.n.Load()) }

func (c *Counter) add(delta int64) {
	if c != nil {
		c.n.Add(delta)
	}
}

// item is one frame waiting to be written.
type item struct {
	header  [frame.PrefixSize + frame.HeaderSize]byte
	json    []byte
	payload []byte
	size    int
	bulk    bool
	counter *Counter
	// mergeKey, when set, lets SendMerging append later payloads of the same key and JSON to this frame.
	mergeKey any
	// merged is true once payload is memory of the writer's own, with room to grow.
	merged bool
	// written is the frame's Written callback: called once the frame left the queue (written or dropped).
	written func()
}

// fifo is a slice-backed queue that reuses its storage once drained.
type fifo struct {
	items []item
	head  int
}

func (q *fifo) len() int { return len(q.items) - q.head }

func (q *fifo) push(it item) { q.items = append(q.items, it) }

func (q *fifo) pop() item {
	it := q.items[q.head]
	q.items[q.head] = item{}
	q.head++
	switch {
	case q.head == len(q.items):
		q.items = q.items[:0]
		q.head = 0
	case q.head >= 64 && q.head*2 >= len(q.items):
		// A queue that never empties would otherwise grow its backing array forever.
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items = q.items[:n]
		q.head = 0
	}
	return it
}

// Writer owns stdout: one goroutine writes every frame; frames queued together are written together, and
// nothing stays buffered once the queues are empty.
type Writer struct {
	cfg Config
	out sink
	// batch and scratch are the reusable storage for one batch, owned by whoever set writing.
	batch   []item
	scratch []byte
	vec     [][]byte

	mu        sync.Mutex
	control   fifo
	bulk      fifo
	bulkBytes int
	closing   bool  // no new frames; the goroutine stops once the queues are empty
	writing   bool  // a batch is being written, by the writer goroutine or by SendNow's caller
	err       error // the write error that stopped the writer, if any
	waiters   int   // goroutines blocked in WaitForRoom or Send
	changed   chan struct{}

	wake chan struct{}
	done chan struct{}
}

// New starts a Writer over w.
func New(w io.Writer, cfg Config) *Writer {
	cfg = cfg.WithDefaults()
	o := &Writer{
		cfg:     cfg,
		out:     newSink(w),
		changed: make(chan struct{}),
		wake:    make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	go o.run()
	return o
}

// Send queues a frame. Control frames block while the control queue is full (until room, or the writer
// closes); bulk frames never block here — producers call WaitForRoom first. The JSON and payload must not be
// modified afterwards. A frame over the size limit fails with frame.ErrTooLarge and leaves the writer working.
func (o *Writer) Send(queue proto.Queue, f frame.Frame, counter *Counter) error {
	return o.send(queue, f, counter, nil)
}

func (o *Writer) send(queue proto.Queue, f frame.Frame, counter *Counter, mergeKey any) error {
	it, err := newItem(queue, f, counter)
	if err != nil {
		return err
	}
	it.mergeKey = mergeKey
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.queueLocked(it)
}

// queueLocked queues a frame as Send does: a control frame first waits for room in the control queue.
func (o *Writer) queueLocked(it item) error {
	if !it.bulk {
		if err := o.waitLocked(func() bool { return o.control.len() < o.cfg.ControlLimit }, nil); err != nil {
			return err
		}
	}
	return o.enqueueLocked(it)
}

// SendNow is Send of a control frame that need not wait for the writer goroutine: when no frame is queued or being
// written, the caller writes f itself and returns once it is written; otherwise f is queued as by Send. A failed
// write stops the writer as any write error does (Done, Wait). The server sends with it the reply to the only
// request in flight: nothing could be batched with it, and a hand-off to the writer goroutine would cost each
// round trip a switch to that goroutine.
func (o *Writer) SendNow(f frame.Frame) error {
	it, err := newItem(proto.ControlQueue, f, nil)
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closing || o.writing || o.control.len() > 0 || o.bulk.len() > 0 {
		return o.queueLocked(it)
	}
	o.writing = true
	o.batch = append(o.batch, it)
	o.mu.Unlock()
	err = o.write()
	o.mu.Lock()
	o.finishBatchLocked(err)
	if o.control.len() > 0 || o.bulk.len() > 0 || o.closing {
		// Frames queued meanwhile, or a close, are the writer goroutine's again.
		o.wakeLocked()
	}
	return nil
}

// SendMerging is Send for a stream of events whose payloads may be joined (command output): when the last frame
// waiting in the queue came from the same key with the same JSON, and the joined payload stays within
// MaxMergedPayload, f's payload is appended to it instead of queuing another frame. A producer that is faster
// than the connection thus sends fewer, larger frames, in the same order, without ever waiting to batch.
func (o *Writer) SendMerging(queue proto.Queue, f frame.Frame, counter *Counter, key any) error {
	if key == nil {
		return o.Send(queue, f, counter)
	}
	o.mu.Lock()
	merged := o.mergeLocked(queue, f, key)
	o.mu.Unlock()
	if merged {
		return nil
	}
	return o.send(queue, f, counter, key)
}

// mergeLocked appends f's payload to the last queued frame of the queue if it came from key with the same JSON.
func (o *Writer) mergeLocked(queue proto.Queue, f frame.Frame, key any) bool {
	q := &o.control
	if queue == proto.BulkQueue {
		q = &o.bulk
	}
	if o.closing || q.len() == 0 {
		return false
	}
	last := &q.items[len(q.items)-1]
	joined := len(last.payload) + len(f.Payload)
	if last.mergeKey != key || last.header[frame.PrefixSize] != byte(f.Type) ||
		binary.BigEndian.Uint32(last.header[frame.PrefixSize+1:]) != f.ID || joined > MaxMergedPayload ||
		string(last.json) != string(f.JSON) {
		return false
	}
	header, err := frame.Header(f.Type, f.ID, len(last.json), joined)
	if err != nil {
		return false
	}
	if !last.merged || cap(last.payload) < joined {
		// Room for what is likely to follow, so a run of small events costs amortized linear copying.
		grown := make([]byte, len(last.payload), min(MaxMergedPayload, max(2*joined, 64<<10)))
		copy(grown, last.payload)
		last.payload, last.merged = grown, true
		if last.written != nil {
			// The frame's own payload was copied out: its memory is free already.
			last.written()
			last.written = nil
		}
	}
	last.payload = append(last.payload, f.Payload...)
	if f.Written != nil {
		// The payload was copied: its memory is free already.
		f.Written()
	}
	last.header = header
	last.size += len(f.Payload)
	if last.bulk {
		o.bulkBytes += len(f.Payload)
	}
	return true
}

// TrySend queues a control-queue frame only if that needs no waiting; it reports whether the frame was queued.
// Pings use it so that a stuck peer never blocks the liveness timer.
func (o *Writer) TrySend(f frame.Frame) (bool, error) {
	it, err := newItem(proto.ControlQueue, f, nil)
	if err != nil {
		return false, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closing {
		return false, o.closedErrLocked()
	}
	if o.control.len() >= o.cfg.ControlLimit {
		return false, nil
	}
	return true, o.enqueueLocked(it)
}

func newItem(queue proto.Queue, f frame.Frame, counter *Counter) (item, error) {
	h, err := frame.Header(f.Type, f.ID, len(f.JSON), len(f.Payload))
	if err != nil {
		return item{}, err
	}
	return item{
		header:  h,
		json:    f.JSON,
		payload: f.Payload,
		size:    f.Size(),
		bulk:    queue == proto.BulkQueue,
		counter: counter,
		written: f.Written,
	}, nil
}

func (o *Writer) enqueueLocked(it item) error {
	if o.closing {
		return o.closedErrLocked()
	}
	if it.bulk {
		o.bulk.push(it)
		o.bulkBytes += it.size
	} else {
		o.control.push(it)
	}
	it.counter.add(1)
	o.wakeLocked()
	return nil
}

// wakeLocked wakes the writer goroutine if it waits for frames.
func (o *Writer) wakeLocked() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// WaitForRoom blocks while more than the bulk limit of bulk bytes is unsent. It returns nil when there is room
// or stop fired (stop may be nil), and ErrClosed (or the write error) once the writer is closed.
func (o *Writer) WaitForRoom(stop <-chan struct{}) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.waitLocked(func() bool { return o.bulkBytes <= o.cfg.BulkLimit }, stop)
}

// waitLocked waits, with o.mu held on entry and exit, until ready() holds, stop fires or the writer closes.
func (o *Writer) waitLocked(ready func() bool, stop <-chan struct{}) error {
	var ticker *time.Ticker
	for {
		if o.closing {
			return o.closedErrLocked()
		}
		if ready() {
			return nil
		}
		if ticker == nil {
			ticker = time.NewTicker(o.cfg.Recheck)
			defer ticker.Stop()
		}
		changed := o.changed
		o.waiters++
		o.mu.Unlock()
		stopped := false
		select {
		case <-changed:
		case <-ticker.C:
		case <-stop:
			stopped = true
		}
		o.mu.Lock()
		o.waiters--
		if stopped {
			return nil
		}
	}
}

// closedErrLocked is the error for frames offered after close: the write error if one stopped the writer.
func (o *Writer) closedErrLocked() error {
	if o.err != nil {
		return fmt.Errorf("%w: %w", ErrClosed, o.err)
	}
	return ErrClosed
}

// notifyLocked wakes every goroutine blocked in WaitForRoom or Send.
func (o *Writer) notifyLocked() {
	if o.waiters == 0 {
		return
	}
	close(o.changed)
	o.changed = make(chan struct{})
}

// BulkUnsent returns the number of bulk bytes queued or being written.
func (o *Writer) BulkUnsent() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.bulkBytes
}

// Close stops accepting frames; the writer goroutine writes what is already queued and then stops. Blocked
// producers are released with ErrClosed.
func (o *Writer) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.closing {
		o.closing = true
		o.notifyLocked()
		o.wakeLocked()
	}
}

// Done is closed when the writer goroutine has stopped.
func (o *Writer) Done() <-chan struct{} { return o.done }

// Wait blocks until the writer goroutine has stopped and returns the write error that stopped it, if any.
func (o *Writer) Wait() error {
	<-o.done
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

func (o *Writer) run() {
	defer close(o.done)
	for {
		if !o.next() {
			return
		}
		err := o.write()
		o.mu.Lock()
		o.finishBatchLocked(err)
		o.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// finishBatchLocked settles the frames of the batch just written (or failed) and releases the right to write.
func (o *Writer) finishBatchLocked(err error) {
	for i := range o.batch {
		o.settleLocked(o.batch[i])
		o.batch[i] = item{}
	}
	o.batch = o.batch[:0]
	o.writing = false
	if err != nil {
		o.failLocked(err)
		return
	}
	o.notifyLocked()
}

// next fills o.batch with the frames to write next: every waiting control frame first, then bulk frames up to
// the batch size (at least one). It waits while SendNow's caller writes, and reports false when the writer is
// closing and nothing is left.
func (o *Writer) next() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for o.writing || (o.control.len() == 0 && o.bulk.len() == 0) {
		if o.closing && !o.writing {
			o.notifyLocked()
			return false
		}
		o.mu.Unlock()
		<-o.wake
		o.mu.Lock()
	}
	o.writing = true
	for o.control.len() > 0 && len(o.batch) < maxBatchFrames {
		o.batch = append(o.batch, o.control.pop())
	}
	bulkBytes := 0
	for o.bulk.len() > 0 && len(o.batch) < maxBatchFrames && (bulkBytes == 0 || bulkBytes < o.cfg.BufferSize) {
		it := o.bulk.pop()
		bulkBytes += it.size
		o.batch = append(o.batch, it)
	}
	return true
}

// write writes o.batch in order with one vectored write: headers, JSON and small payloads are copied into one
// buffer, large payloads are written from their own memory.
func (o *Writer) write() error {
	o.scratch = o.scratch[:0]
	// First copy, remembering where each piece lies (the scratch buffer may move while it grows) …
	type piece struct {
		start, end int    // a range of o.scratch, when payload is nil
		payload    []byte // a payload written in place
	}
	pieces := make([]piece, 0, 2*len(o.batch)+1)
	start := 0
	for i := range o.batch {
		it := &o.batch[i]
		o.scratch = append(o.scratch, it.header[:]...)
		o.scratch = append(o.scratch, it.json...)
		if len(it.payload) <= inlinePayload {
			o.scratch = append(o.scratch, it.payload...)
			continue
		}
		pieces = append(pieces, piece{start: start, end: len(o.scratch)}, piece{payload: it.payload})
		start = len(o.scratch)
	}
	if start < len(o.scratch) {
		pieces = append(pieces, piece{start: start, end: len(o.scratch)})
	}
	// … then point at them.
	o.vec = o.vec[:0]
	for _, p := range pieces {
		if p.payload != nil {
			o.vec = append(o.vec, p.payload)
		} else if p.end > p.start {
			o.vec = append(o.vec, o.scratch[p.start:p.end])
		}
	}
	err := o.out.writeVec(o.vec)
	clear(o.vec)
	if cap(o.scratch) > 4*o.cfg.BufferSize {
		// One huge burst must not pin its memory for the rest of the connection.
		o.scratch = nil
	}
	if err != nil {
		return fmt.Errorf("write frame: %w", err)
	}
	return nil
}

// settleLocked accounts for a frame that left the queue (written or discarded).
func (o *Writer) settleLocked(it item) {
	if it.bulk {
		o.bulkBytes -= it.size
	}
	it.counter.add(-1)
	if it.written != nil {
		it.written()
	}
}

// failLocked stops the writer for good after a write error: queued frames are discarded and everyone waiting
// is released.
func (o *Writer) failLocked(err error) {
	o.err = err
	o.closing = true
	for o.control.len() > 0 {
		o.settleLocked(o.control.pop())
	}
	for o.bulk.len() > 0 {
		o.settleLocked(o.bulk.pop())
	}
	o.notifyLocked()
}
