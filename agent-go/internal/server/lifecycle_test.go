package server

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/agent-go/internal/frame"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// dyingCommands answers every exec the way the real runner answers a command KillAll killed: with the
// SIGKILL status as a result. Its KillAll returns only once the killed command's handler has returned and
// the reply had every chance to reach the output (it waits for a write, bounded), so an agent that still
// accepts replies while it kills cannot hide the false success behind scheduling luck.
type dyingCommands struct {
	started  chan struct{}
	killed   chan struct{}
	returned chan struct{}
	wrote    <-chan struct{}
	// settled is set when the handler is completely done, after a pause that outlasts KillAll.
	settled atomic.Bool
	// linger is how long the handler keeps running after the kill.
	linger time.Duration
}

func newDyingCommands(wrote <-chan struct{}) *dyingCommands {
	return &dyingCommands{started: make(chan struct{}), killed: make(chan struct{}), returned: make(chan struct{}),
		wrote: wrote}
}

func (d *dyingCommands) Handle(call *proto.Call) (proto.Reply, error) {
	close(d.started)
	<-d.killed
	time.Sleep(d.linger)
	d.settled.Store(true)
	defer close(d.returned)
	return proto.Reply{JSON: map[string]any{"exitCode": 137}, Bulk: true}, nil
}

func (d *dyingCommands) KillAll() {
	close(d.killed)
	if d.linger > 0 {
		return
	}
	<-d.returned
	select {
	case <-d.wrote:
	case <-time.After(500 * time.Millisecond):
	}
}

// signallingBuffer is the server's output; each write after the sync line is announced on wrote.
type signallingBuffer struct {
	lockedBuffer
	writes atomic.Int32
	wrote  chan struct{}
	once   sync.Once
}

func (b *signallingBuffer) Write(p []byte) (int, error) {
	n, err := b.lockedBuffer.Write(p)
	if b.writes.Add(1) > 1 {
		b.once.Do(func() { close(b.wrote) })
	}
	return n, err
}

// framesOf decodes the server's whole output after the sync line.
func framesOf(t *testing.T, raw []byte) []frame.Frame {
	t.Helper()
	line := bytes.IndexByte(raw, '\n')
	if line < 0 {
		t.Fatalf("no sync line in %q", raw)
	}
	r := frame.NewReader(bytes.NewReader(raw[line+1:]))
	var frames []frame.Frame
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			return frames
		}
		if err != nil {
			t.Fatalf("the output is not a frame stream: %v", err)
		}
		frames = append(frames, f)
	}
}

// serving is one Serve call over a pipe for the input.
type serving struct {
	in     *io.PipeWriter
	served chan error
	once   sync.Once
	err    error
}

// serveOnce runs Serve over a pipe for the input and out for the output.
func serveOnce(t *testing.T, cfg Config, out io.Writer) *serving {
	t.Helper()
	cfg.Token = "ab"
	cfg.Info = &testInfo
	cfg.Log = io.Discard
	cfg.PingInterval = time.Hour
	if cfg.Files == nil {
		cfg.Files = newFakeFiles()
	}
	inR, inW := io.Pipe()
	s := &serving{in: inW, served: make(chan error, 1)}
	go func() { s.served <- Serve(inR, out, cfg) }()
	t.Cleanup(func() {
		_ = inW.Close()
		s.wait(t)
		_ = inR.Close()
	})
	return s
}

// wait returns Serve's result once it has returned.
func (s *serving) wait(t *testing.T) error {
	t.Helper()
	s.once.Do(func() {
		select {
		case s.err = <-s.served:
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not return")
		}
	})
	return s.err
}

func writeFrame(t *testing.T, w io.Writer, f frame.Frame) {
	t.Helper()
	if _, err := w.Write(mustEncode(t, f)); err != nil {
		t.Fatalf("write to the server: %v", err)
	}
}

// A command the agent kills because the connection ends never gets a result: the client must see the
// connection lost, not a command that exited with 137 (which reads as a successful cleanup() kill).
func TestKilledAtShutdownGetsNoResult(t *testing.T) {
	out := &signallingBuffer{wrote: make(chan struct{})}
	commands := newDyingCommands(out.wrote)
	conn := serveOnce(t, Config{Commands: commands}, out)
	writeFrame(t, conn.in, frame.Frame{Type: frame.Request, ID: 1, JSON: []byte(`{"op":"exec"}`)})
	<-commands.started
	_ = conn.in.Close()
	if err := conn.wait(t); err != nil {
		t.Fatalf("Serve returned %v", err)
	}
	for _, f := range framesOf(t, out.bytes()) {
		if f.ID == 1 {
			t.Fatalf("the killed command was answered: type %d %s", f.Type, f.JSON)
		}
	}
}

// Shutdown joins the goroutines it started: when Serve returns, the handler of a killed command has returned
// too (here it takes a while to settle after the kill, as a command whose pipes a descendant holds does).
func TestShutdownWaitsForRunningOperations(t *testing.T) {
	commands := newDyingCommands(nil)
	commands.linger = 300 * time.Millisecond
	conn := serveOnce(t, Config{Commands: commands}, &lockedBuffer{})
	writeFrame(t, conn.in, frame.Frame{Type: frame.Request, ID: 1, JSON: []byte(`{"op":"exec"}`)})
	<-commands.started
	_ = conn.in.Close()
	if err := conn.wait(t); err != nil {
		t.Fatalf("Serve returned %v", err)
	}
	if !commands.settled.Load() {
		t.Fatal("Serve returned while a command's handler was still running")
	}
}

// An operation that runs until its request is cancelled (a watch) ends when the connection does: shutdown aborts
// it at once instead of waiting out the exit grace for it.
func TestShutdownAbortsOperationsThatWaitForACancel(t *testing.T) {
	started := make(chan struct{})
	untilCancelled := func(call *proto.Call) (proto.Reply, error) {
		close(started)
		for !call.Control.Aborted() {
			<-call.Control.Changed()
		}
		return proto.Reply{}, nil
	}
	conn := serveOnce(t, Config{Dedicated: map[string]proto.Handler{"wait": untilCancelled}, ExitGrace: time.Minute},
		&lockedBuffer{})
	writeFrame(t, conn.in, frame.Frame{Type: frame.Request, ID: 1, JSON: []byte(`{"op":"wait"}`)})
	<-started
	begin := time.Now()
	_ = conn.in.Close()
	if err := conn.wait(t); err != nil {
		t.Fatalf("Serve returned %v", err)
	}
	if elapsed := time.Since(begin); elapsed > 5*time.Second {
		t.Fatalf("shutdown took %v: the waiting operation was not aborted", elapsed)
	}
}

// A client that closed the agent's output but keeps its input open is gone for good: the first failed write
// ends the connection like EOF does, killing every command.
func TestWriteFailureEndsTheConnection(t *testing.T) {
	outR, outW := io.Pipe()
	fake := newFakeCommands()
	conn := serveOnce(t, Config{Commands: fake}, outW)
	if line, err := bufio.NewReader(outR).ReadString('\n'); err != nil || !strings.HasPrefix(line, "PI-ENV ab") {
		t.Fatalf("sync line %q: %v", line, err)
	}
	writeFrame(t, conn.in, frame.Frame{Type: frame.Request, ID: 1, JSON: []byte(`{"op":"exec","wait":true}`)})
	_ = outR.CloseWithError(errors.New("broken pipe"))
	writeFrame(t, conn.in, frame.Frame{Type: frame.Request, ID: 2, JSON: []byte(`{"op":"hello"}`)})
	err := conn.wait(t)
	if err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Fatalf("Serve returned %v, want the write failure", err)
	}
	if fake.killAll.Load() != 1 {
		t.Fatalf("KillAll called %d times, want 1", fake.killAll.Load())
	}
}

// The payload budget covers every request kind, not only writeChunk: pool requests waiting for a worker hold
// their frames, and once they hold the budget the reader stops reading (the request that does not fit waits,
// and the hello behind it stays in the pipe).
func TestPayloadBudgetCoversPoolRequests(t *testing.T) {
	const payload = 1000
	files := newFakeFiles()
	c := startServer(t, Config{Files: files, PayloadBudget: 3 * payload, Workers: 1})
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(files.release) }) }
	t.Cleanup(release)
	blockJSON := `{"op":"block"}`
	for id := uint32(1); id <= 4; id++ {
		c.send(frame.Request, id, blockJSON, bytes.Repeat([]byte{'x'}, payload-len(blockJSON)))
	}
	hello := writeAsync(c, mustEncode(t, frame.Frame{Type: frame.Request, ID: 9, JSON: []byte(`{"op":"hello"}`)}))
	select {
	case <-hello:
		t.Fatal("the reader kept reading while the queued requests held the whole budget")
	case f := <-c.frames:
		t.Fatalf("unexpected frame type %d id %d", f.Type, f.ID)
	case <-time.After(300 * time.Millisecond):
	}
	release()
	waitWritten(t, hello, "the hello once the requests finished")
	answered := map[uint32]bool{}
	for range 5 {
		answered[c.next().ID] = true
	}
	if !answered[9] || len(answered) != 5 {
		t.Fatalf("answered %v, want 1 to 4 and the hello", answered)
	}
}
