// Package output is the agent's single stdout writer. Frames wait in two queues: the control queue (results,
// errors, pings, watch events) is always drained before the bulk queue (command output, command results, large
// payloads), so a chatty command never delays a ping or the answer to a cancel. Bulk bytes are counted so that
// producers can wait for room instead of buffering without bound.
package output

import (
	"bufio"
	"errors"
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
	// DefaultBufferSize is the size of the buffered writer over stdout.
	DefaultBufferSize = 1 << 20
)

// ErrClosed is returned for frames offered after the writer closed, or after a write error stopped it.
var ErrClosed = errors.New("output closed")

// Config tunes a Writer; zero fields take the defaults.
type Config struct {
	BulkLimit    int
	ControlLimit int
	Recheck      time.Duration
	BufferSize   int
}

func (c Config) withDefaults() Config {
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

// Writer owns stdout: one goroutine writes every frame, flushing after each.
type Writer struct {
	cfg Config
	out *bufio.Writer

	mu        sync.Mutex
	control   fifo
	bulk      fifo
	bulkBytes int
	closing   bool  // no new frames; the goroutine stops once the queues are empty
	err       error // the write error that stopped the writer, if any
	waiters   int   // goroutines blocked in WaitForRoom or Send
	changed   chan struct{}

	wake chan struct{}
	done chan struct{}
}

// New starts a Writer over w.
func New(w io.Writer, cfg Config) *Writer {
	cfg = cfg.withDefaults()
	o := &Writer{
		cfg:     cfg,
		out:     bufio.NewWriterSize(w, cfg.BufferSize),
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
	it, err := newItem(queue, f, counter)
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if queue != proto.BulkQueue {
		if err := o.waitLocked(func() bool { return o.control.len() < o.cfg.ControlLimit }, nil); err != nil {
			return err
		}
	}
	return o.enqueueLocked(it)
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
	select {
	case o.wake <- struct{}{}:
	default:
	}
	return nil
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
		select {
		case o.wake <- struct{}{}:
		default:
		}
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
		it, ok := o.next()
		if !ok {
			return
		}
		err := o.write(&it)
		o.mu.Lock()
		o.settleLocked(it)
		if err != nil {
			o.failLocked(err)
			o.mu.Unlock()
			return
		}
		o.notifyLocked()
		o.mu.Unlock()
	}
}

// next pops the next frame, control first; it reports false when the writer is closing and nothing is left.
func (o *Writer) next() (item, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for {
		switch {
		case o.control.len() > 0:
			return o.control.pop(), true
		case o.bulk.len() > 0:
			return o.bulk.pop(), true
		case o.closing:
			o.notifyLocked()
			return item{}, false
		}
		o.mu.Unlock()
		<-o.wake
		o.mu.Lock()
	}
}

func (o *Writer) write(it *item) error {
	for _, part := range [][]byte{it.header[:], it.json, it.payload} {
		if _, err := o.out.Write(part); err != nil {
			return fmt.Errorf("write frame: %w", err)
		}
	}
	if err := o.out.Flush(); err != nil {
		return fmt.Errorf("flush frame: %w", err)
	}
	return nil
}

// settleLocked accounts for a frame that left the queue (written or discarded).
func (o *Writer) settleLocked(it item) {
	if it.bulk {
		o.bulkBytes -= it.size
	}
	it.counter.add(-1)
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
