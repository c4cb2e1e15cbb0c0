//go:build windows

package execop

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"golang.org/x/sys/windows"
)

// stopKey is the completion key of the packet that stops the reader; the streams' keys are their indexes.
const stopKey = 2

// How long stopping waits for each cancelled read to report back before it gives up on it.
const cancelWaitMs = 5000

// errReaderStopped is what next returns once the reader was told to stop.
var errReaderStopped = errors.New("output reading stopped")

// outputReader reads a child's two output pipes through one I/O completion port, as libuv's event loop reads
// them under Node: a zero-byte overlapped read is pending on each pipe and completes when the pipe holds data
// (or ended); completions arrive in the order they happened, so the streams are read in arrival order
// (spec X20). The structure stays allocated until the reader is closed: the kernel writes into the pending
// reads' OVERLAPPED until they complete.
type outputReader struct {
	port  windows.Handle
	pipes [2]windows.Handle
	// zeroReads are the pending zero-byte reads; pending says which are still outstanding.
	zeroReads [2]windows.Overlapped
	pending   [2]bool
	// dataRead is the overlapped read that takes the data a completion announced. Its event's low bit is set
	// so it posts no completion packet.
	dataRead  windows.Overlapped
	dataEvent windows.Handle
}

// newOutputReader makes the completion port over both pipes; it owns the pipes from then on.
func newOutputReader(stdoutPipe, stderrPipe windows.Handle) (*outputReader, error) {
	r := &outputReader{pipes: [2]windows.Handle{stdoutPipe, stderrPipe}}
	port, err := windows.CreateIoCompletionPort(windows.InvalidHandle, 0, 0, 1)
	if err != nil {
		r.closePipes()
		return nil, fmt.Errorf("create completion port: %w", err)
	}
	r.port = port
	for stream, pipe := range r.pipes {
		if _, err := windows.CreateIoCompletionPort(pipe, port, uintptr(stream), 0); err != nil {
			r.close()
			return nil, fmt.Errorf("associate pipe with completion port: %w", err)
		}
	}
	event, err := windows.CreateEvent(nil, 1, 0, nil)
	if err != nil {
		r.close()
		return nil, fmt.Errorf("create read event: %w", err)
	}
	r.dataEvent = event
	return r, nil
}

// queueRead starts the stream's zero-byte read; false means the stream ended (or failed) already.
func (r *outputReader) queueRead(stream int) bool {
	r.zeroReads[stream] = windows.Overlapped{}
	if err := readZero(r.pipes[stream], &r.zeroReads[stream]); err != nil && err != windows.ERROR_IO_PENDING {
		return false
	}
	r.pending[stream] = true
	return true
}

// next waits for the next completion: the stream whose zero-byte read completed, with its error (the end of
// the stream when non-nil), or errReaderStopped.
func (r *outputReader) next() (stream int, err error) {
	var n uint32
	var key uintptr
	var ov *windows.Overlapped
	err = windows.GetQueuedCompletionStatus(r.port, &n, &key, &ov, windows.INFINITE)
	if ov == nil {
		// The stop packet, or the port itself failed: either way reading is over.
		return -1, errReaderStopped
	}
	stream = int(key)
	r.pending[stream] = false
	return stream, err
}

// available returns how many bytes the stream holds now.
func (r *outputReader) available(stream int) (int, error) {
	avail, err := peekAvailable(r.pipes[stream])
	return int(avail), err
}

// read takes up to len(buf) bytes the stream is known to hold, without posting a completion packet.
func (r *outputReader) read(stream int, buf []byte) (int, error) {
	r.dataRead = windows.Overlapped{HEvent: r.dataEvent | 1}
	var n uint32
	err := windows.ReadFile(r.pipes[stream], buf, &n, &r.dataRead)
	if err == windows.ERROR_IO_PENDING {
		// Not expected (the bytes are there); wait for the read rather than leave it outstanding.
		_, _ = windows.WaitForSingleObject(r.dataEvent, windows.INFINITE)
		err = windows.GetOverlappedResult(r.pipes[stream], &r.dataRead, &n, false)
	}
	return int(n), err
}

// stop makes a pending or later next return errReaderStopped; it may be called from any goroutine.
func (r *outputReader) stop() {
	_ = windows.PostQueuedCompletionStatus(r.port, 0, stopKey, nil)
}

// cancel cancels the outstanding zero-byte reads and waits (bounded) until each reported back.
func (r *outputReader) cancel() {
	for stream, pending := range r.pending {
		if pending {
			_ = windows.CancelIoEx(r.pipes[stream], &r.zeroReads[stream])
		}
	}
	for r.pending[stdout] || r.pending[stderr] {
		var n uint32
		var key uintptr
		var ov *windows.Overlapped
		err := windows.GetQueuedCompletionStatus(r.port, &n, &key, &ov, cancelWaitMs)
		if ov == nil {
			if err == windows.WAIT_TIMEOUT {
				return
			}
			continue // a second stop packet
		}
		r.pending[key] = false
	}
}

// close releases the pipes (a descendant writing later gets a broken pipe), the event and the port.
func (r *outputReader) close() {
	r.closePipes()
	if r.dataEvent != 0 {
		_ = windows.CloseHandle(r.dataEvent)
	}
	if r.port != 0 {
		_ = windows.CloseHandle(r.port)
	}
}

func (r *outputReader) closePipes() {
	for stream, pipe := range r.pipes {
		if pipe != 0 {
			_ = windows.CloseHandle(pipe)
			r.pipes[stream] = 0
		}
	}
}

// readOutput starts the command's single reader over both pipes (spec X20). ended receives one value per
// stream at its end; activity is signalled after each chunk. The returned stop ends reading (unread data is
// discarded), waits for the reader and releases the pipes.
func (c *command) readOutput(activity, ended chan<- struct{}) (stop func()) {
	r := c.child.output
	var reader sync.WaitGroup
	reader.Add(1)
	go func() {
		defer reader.Done()
		// One thread issues every read and waits for every completion, as libuv's loop thread does: Wine
		// finishes an overlapped read in the thread that started it, so reads started from different threads
		// could complete out of order (measured: stderr before stdout in 1 of 50 runs without this).
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		c.readStreams(r, activity, ended)
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			r.stop()
			reader.Wait()
			r.close()
		})
	}
}

// readStreams is the reader loop: stdout's read is queued first (as libuv starts reading stdout first), then
// each completion is answered by reading what its stream holds and queueing its next zero-byte read.
func (c *command) readStreams(r *outputReader, activity, ended chan<- struct{}) {
	buf := make([]byte, readBuffer)
	open := 0
	for stream := range r.pipes {
		if r.queueRead(stream) {
			open++
		} else {
			ended <- struct{}{}
		}
	}
	for open > 0 {
		stream, err := r.next()
		if errors.Is(err, errReaderStopped) {
			r.cancel()
			return
		}
		if err != nil || c.drain(r, stream, buf, activity) || !r.queueRead(stream) {
			open--
			ended <- struct{}{}
		}
	}
}

// drain reads what a completed stream holds, as libuv does: the count the pipe reports, in reads of at most
// one buffer. It reports whether the stream ended (a failed peek or read ends it, as it ends a Node socket).
func (c *command) drain(r *outputReader, stream int, buf []byte, activity chan<- struct{}) (ended bool) {
	avail, err := r.available(stream)
	if err != nil {
		return true
	}
	for avail > 0 {
		n, err := r.read(stream, buf[:min(avail, len(buf))])
		if n > 0 {
			c.out.chunk(stream, buf[:n])
			signal(activity)
		}
		if err != nil {
			return true
		}
		if n == 0 || n > avail {
			break
		}
		avail -= n
	}
	return false
}
