package server

import (
	"bytes"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/outpost-dev/outpost/agent-go/internal/frame"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// heldChunk is a chunk the file operations accepted but have not finished.
type heldChunk struct {
	payload []byte
	done    func(proto.Reply, error)
}

// holdingFiles is a FileOps whose chunk writes never complete until the test calls their done: it stands in
// for a disk slower than the client.
type holdingFiles struct {
	*fakeFiles
	handed chan heldChunk
}

func newHoldingFiles() *holdingFiles {
	return &holdingFiles{fakeFiles: newFakeFiles(), handed: make(chan heldChunk, 64)}
}

func (h *holdingFiles) WriteChunk(call *proto.Call, done func(proto.Reply, error)) {
	h.handed <- heldChunk{payload: call.Payload, done: done}
}

// next returns the next chunk handed over, failing after a while.
func (h *holdingFiles) next(t *testing.T) heldChunk {
	t.Helper()
	select {
	case chunk := <-h.handed:
		return chunk
	case <-time.After(5 * time.Second):
		t.Fatal("no chunk reached the file operations")
		return heldChunk{}
	}
}

// expectNoChunk checks that no further chunk is handed over for a short while.
func (h *holdingFiles) expectNoChunk(t *testing.T) {
	t.Helper()
	select {
	case chunk := <-h.handed:
		t.Fatalf("chunk %q was handed over beyond the chunk limit", chunk.payload[:12])
	case <-time.After(200 * time.Millisecond):
	}
}

// chunkJSON is every test chunk's request JSON; the budget counts it with the payload.
const chunkJSON = `{"op":"writeChunk","handle":1}`

const (
	testChunkSize  = 1024
	testChunkFrame = len(chunkJSON) + testChunkSize
	// testChunkLimit holds four chunks and leaves room for a small request (a hello) but not a fifth chunk.
	testChunkLimit = 4*testChunkFrame + 64
)

func chunkFrame(t *testing.T, id uint32) []byte {
	t.Helper()
	payload := bytes.Repeat([]byte{'.'}, testChunkSize)
	copy(payload, fmt.Sprintf("chunk-%06d", id))
	return mustEncode(t, frame.Frame{Type: frame.Request, ID: id, JSON: []byte(chunkJSON),
		Payload: payload})
}

// fillChunkBudget sends chunks 1-4 (exactly the limit) and waits until the file operations hold all of them.
func fillChunkBudget(t *testing.T, c *client, files *holdingFiles) []heldChunk {
	t.Helper()
	var held []heldChunk
	for id := uint32(1); id <= uint32(testChunkLimit/testChunkFrame); id++ {
		c.sendRaw(chunkFrame(t, id))
		held = append(held, files.next(t))
	}
	return held
}

// writeAsync writes raw to the server's input from a goroutine; the channel reports when the pipe write
// returned, i.e. when the server's reader consumed every byte of it.
func writeAsync(c *client, raw []byte) <-chan error {
	written := make(chan error, 1)
	go func() {
		_, err := c.in.Write(raw)
		written <- err
	}()
	return written
}

func waitWritten(t *testing.T, written <-chan error, what string) {
	t.Helper()
	select {
	case err := <-written:
		if err != nil {
			t.Fatalf("write %s: %v", what, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the server did not read %s", what)
	}
}

// Once the chunks handed to the file operations reach the chunk limit, the reader stops taking bytes from its
// input (the next chunk waits, and nothing behind it is read), and it resumes, in order, as chunks complete.
func TestChunkLimitStopsReading(t *testing.T) {
	noLeaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, noLeaks) })
	files := newHoldingFiles()
	c := startServer(t, Config{Files: files, PayloadBudget: testChunkLimit})
	held := fillChunkBudget(t, c, files)

	// Chunk 5 is read (its frame is complete) but must wait for room; the hello behind it stays in the pipe.
	waitWritten(t, writeAsync(c, chunkFrame(t, 5)), "chunk 5")
	helloWritten := writeAsync(c, mustEncode(t, frame.Frame{Type: frame.Request, ID: 99, JSON: []byte(`{"op":"hello"}`)}))
	files.expectNoChunk(t)
	select {
	case <-helloWritten:
		t.Fatal("the reader kept consuming its input beyond the chunk limit")
	case f := <-c.frames:
		t.Fatalf("unexpected frame type %d id %d while the reader should be waiting", f.Type, f.ID)
	default:
	}

	// One chunk completes: chunk 5 is handed over, then the hello is read; both get answered (in either order:
	// the hello is answered by the reader, the chunk by whoever completed it).
	held[0].done(proto.Reply{}, nil)
	fifth := files.next(t)
	if !bytes.HasPrefix(fifth.payload, []byte("chunk-000005")) {
		t.Fatalf("handed over %q after the release, want chunk 5", fifth.payload[:12])
	}
	waitWritten(t, helloWritten, "the hello behind chunk 5")
	answered := map[uint32]frame.Type{}
	for range 2 {
		f := c.next()
		answered[f.ID] = f.Type
	}
	if answered[1] != frame.Result || answered[99] != frame.Result {
		t.Fatalf("replies %v, want results for chunk 1 and the hello (99)", answered)
	}

	// The rest complete with their own replies; the budget is back to empty, so a full burst fits again.
	for i, chunk := range append(held[1:], fifth) {
		chunk.done(proto.Reply{}, errors.New("disk full"))
		if f, got := c.reply(uint32(i + 2)); f.Type != frame.Error || got["message"] != "disk full" {
			t.Fatalf("chunk %d reply: type %d %v", i+2, f.Type, got)
		}
	}
	for id := uint32(10); id < 14; id++ {
		c.sendRaw(chunkFrame(t, id))
		files.next(t).done(proto.Reply{}, nil)
		if f, _ := c.reply(id); f.Type != frame.Result {
			t.Fatalf("chunk %d reply type %d", id, f.Type)
		}
	}
}

// A reader waiting for chunk room is released when the connection stops; nothing deadlocks and the waiting
// chunk is never handed over.
func TestChunkLimitReaderReleasedAtStop(t *testing.T) {
	noLeaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, noLeaks) })
	stop := make(chan struct{})
	files := newHoldingFiles()
	c := startServer(t, Config{Files: files, PayloadBudget: testChunkLimit, Stop: stop})
	held := fillChunkBudget(t, c, files)
	waitWritten(t, writeAsync(c, chunkFrame(t, 5)), "chunk 5")
	files.expectNoChunk(t)

	close(stop)
	if err := c.wait(); !errors.Is(err, ErrStopped) {
		t.Fatalf("Serve returned %v, want ErrStopped", err)
	}
	// The reader left its wait: it reads (and drops) input again instead of staying stuck before chunk 5.
	waitWritten(t, writeAsync(c, chunkFrame(t, 6)), "input after the stop")
	select {
	case chunk := <-files.handed:
		t.Fatalf("chunk %q was handed over after the stop", chunk.payload[:12])
	default:
	}
	for _, chunk := range held {
		chunk.done(proto.Reply{}, nil)
	}
}

// While the reader waits for room it is not reading, so the peer's bytes cannot arrive: that must not count as
// the peer falling silent.
func TestChunkLimitWaitIsNotSilence(t *testing.T) {
	files := newHoldingFiles()
	c := startServer(t, Config{Files: files, PayloadBudget: testChunkLimit, PingInterval: 10 * time.Millisecond,
		SilenceLimit: 250 * time.Millisecond})
	held := fillChunkBudget(t, c, files)
	waitWritten(t, writeAsync(c, chunkFrame(t, 5)), "chunk 5")
	time.Sleep(time.Second) // several silence limits with the reader blocked
	select {
	case err := <-c.served:
		c.result, c.gotDone = err, true
		t.Fatalf("Serve ended while the reader was held back: %v", err)
	default:
	}
	held[0].done(proto.Reply{}, nil)
	fifth := files.next(t)
	for _, chunk := range append(held[1:], fifth) {
		chunk.done(proto.Reply{}, nil)
	}
	// With nothing to wait for and no input, the connection does fall silent.
	if err := c.wait(); !errors.Is(err, ErrSilence) {
		t.Fatalf("Serve returned %v, want ErrSilence", err)
	}
}

func TestChunkLimitWaitEndsWhenThePeerHungUp(t *testing.T) {
	files := newHoldingFiles()
	var gone atomic.Bool
	c := startServer(t, Config{Files: files, PayloadBudget: testChunkLimit, PingInterval: 10 * time.Millisecond,
		SilenceLimit: 250 * time.Millisecond, PeerGone: gone.Load})
	held := fillChunkBudget(t, c, files)
	waitWritten(t, writeAsync(c, chunkFrame(t, 5)), "chunk 5")
	time.Sleep(400 * time.Millisecond) // held back but the peer is there: alive
	select {
	case err := <-c.served:
		c.result, c.gotDone = err, true
		t.Fatalf("Serve ended while the peer was still there: %v", err)
	default:
	}
	gone.Store(true) // nobody can write any more: a held-back reader no longer keeps the connection alive
	if err := c.wait(); !errors.Is(err, ErrSilence) {
		t.Fatalf("Serve returned %v, want ErrSilence", err)
	}
	for _, chunk := range held {
		chunk.done(proto.Reply{}, nil)
	}
}
