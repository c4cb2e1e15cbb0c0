package output

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/outpost-dev/outpost/agent-go/internal/frame"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// gatedWriter blocks every Write until the test lets it through, and records what was written.
type gatedWriter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	gate    chan struct{}
	entered chan struct{}
	fail    error
}

func newGatedWriter() *gatedWriter {
	return &gatedWriter{gate: make(chan struct{}), entered: make(chan struct{}, 1000)}
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.entered <- struct{}{}
	<-g.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fail != nil {
		return 0, g.fail
	}
	return g.buf.Write(p)
}

func (g *gatedWriter) open() { close(g.gate) }

func (g *gatedWriter) frames(t *testing.T) []frame.Frame {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	r := frame.NewReader(bytes.NewReader(g.buf.Bytes()))
	var out []frame.Frame
	for {
		f, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("written stream does not decode: %v", err)
		}
		out = append(out, f)
	}
}

// drain lets every write through, closes the writer, waits for it and returns what it wrote.
func (g *gatedWriter) drain(t *testing.T, w *Writer) []frame.Frame {
	t.Helper()
	g.open()
	w.Close()
	if err := w.Wait(); err != nil {
		t.Fatal(err)
	}
	return g.frames(t)
}

func ev(id uint32, size int) frame.Frame {
	return frame.Frame{Type: frame.Event, ID: id, JSON: []byte(`{}`), Payload: make([]byte, size)}
}

func waitClosed(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not happen", what)
	}
}

func TestControlBeforeBulk(t *testing.T) {
	g := newGatedWriter()
	w := New(g, Config{})
	// The first frame gets stuck in the gated write; everything after it queues up.
	if err := w.Send(proto.BulkQueue, ev(1, 10), nil); err != nil {
		t.Fatal(err)
	}
	<-g.entered
	sends := []struct {
		queue proto.Queue
		id    uint32
	}{
		{proto.BulkQueue, 2}, {proto.ControlQueue, 100}, {proto.BulkQueue, 3},
		{proto.ControlQueue, 101}, {proto.ControlQueue, 102}, {proto.BulkQueue, 4},
	}
	for _, s := range sends {
		if err := w.Send(s.queue, ev(s.id, 5), nil); err != nil {
			t.Fatal(err)
		}
	}
	var got []uint32
	for _, f := range g.drain(t, w) {
		got = append(got, f.ID)
	}
	want := []uint32{1, 100, 101, 102, 2, 3, 4}
	if len(got) != len(want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}

func TestWaitForRoom(t *testing.T) {
	const limit = 100
	cases := []struct {
		name string
		// act releases the blocked WaitForRoom somehow and says what it should return.
		act     func(g *gatedWriter, w *Writer, stop chan struct{})
		wantErr error
	}{
		{"drain makes room", func(g *gatedWriter, w *Writer, stop chan struct{}) { g.open() }, nil},
		{"stop fires", func(g *gatedWriter, w *Writer, stop chan struct{}) { close(stop) }, nil},
		{"close releases", func(g *gatedWriter, w *Writer, stop chan struct{}) { w.Close() }, ErrClosed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newGatedWriter()
			w := New(g, Config{BulkLimit: limit, Recheck: 10 * time.Millisecond})
			defer func() {
				select {
				case <-g.gate:
				default:
					g.open()
				}
				w.Close()
				_ = w.Wait()
			}()
			for i := range 3 {
				if err := w.Send(proto.BulkQueue, ev(uint32(i), 60), nil); err != nil {
					t.Fatal(err)
				}
			}
			if got := w.BulkUnsent(); got != 3*(9+2+60) {
				t.Fatalf("BulkUnsent %d", got)
			}
			stop := make(chan struct{})
			result := make(chan error, 1)
			go func() { result <- w.WaitForRoom(stop) }()
			select {
			case err := <-result:
				t.Fatalf("WaitForRoom returned %v with %d bulk bytes unsent", err, w.BulkUnsent())
			case <-time.After(50 * time.Millisecond):
			}
			tc.act(g, w, stop)
			select {
			case err := <-result:
				if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
					t.Fatalf("WaitForRoom: %v, want %v", err, tc.wantErr)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("WaitForRoom stayed blocked")
			}
		})
	}
}

// A producer that waits for room before every frame never has more than the limit plus one frame unsent.
func TestBackpressureBound(t *testing.T) {
	const limit = 1000
	const frameSize = 9 + 2 + 300
	g := newGatedWriter()
	w := New(g, Config{BulkLimit: limit, Recheck: 5 * time.Millisecond})
	var counter Counter
	produced := make(chan struct{})
	maxSeen := 0
	go func() {
		defer close(produced)
		for i := range 50 {
			if err := w.WaitForRoom(nil); err != nil {
				t.Errorf("WaitForRoom: %v", err)
				return
			}
			if err := w.Send(proto.BulkQueue, ev(uint32(i), 300), &counter); err != nil {
				t.Errorf("Send: %v", err)
				return
			}
			maxSeen = max(maxSeen, w.BulkUnsent())
		}
	}()
	// Let the writer go slowly so the producer runs into the limit.
	go func() {
		for range 10 {
			time.Sleep(2 * time.Millisecond)
			g.gate <- struct{}{}
		}
		g.open()
	}()
	waitClosed(t, produced, "the producer finishing")
	w.Close()
	if err := w.Wait(); err != nil {
		t.Fatal(err)
	}
	if maxSeen > limit+frameSize {
		t.Fatalf("unsent bulk reached %d bytes, bound %d", maxSeen, limit+frameSize)
	}
	if got := len(g.frames(t)); got != 50 {
		t.Fatalf("%d frames written, want 50", got)
	}
	if counter.Unsent() != 0 || w.BulkUnsent() != 0 {
		t.Fatalf("after drain: counter %d, bulk %d", counter.Unsent(), w.BulkUnsent())
	}
}

func TestWriteErrorClosesForGood(t *testing.T) {
	g := newGatedWriter()
	g.fail = errors.New("broken pipe")
	w := New(g, Config{BulkLimit: 10, ControlLimit: 2, Recheck: time.Hour})
	var counter Counter
	if err := w.Send(proto.BulkQueue, ev(1, 50), &counter); err != nil {
		t.Fatal(err)
	}
	<-g.entered
	for i := range 2 {
		if err := w.Send(proto.ControlQueue, ev(uint32(10+i), 1), &counter); err != nil {
			t.Fatal(err)
		}
	}
	// Everyone now blocks: one waiting for bulk room, one for control room.
	room := make(chan error, 1)
	go func() { room <- w.WaitForRoom(nil) }()
	send := make(chan error, 1)
	go func() { send <- w.Send(proto.ControlQueue, ev(20, 1), &counter) }()
	time.Sleep(20 * time.Millisecond)
	if counter.Unsent() != 3 {
		t.Fatalf("unsent before the failure: %d", counter.Unsent())
	}
	g.open()
	for name, ch := range map[string]chan error{"WaitForRoom": room, "Send": send} {
		select {
		case err := <-ch:
			if !errors.Is(err, ErrClosed) {
				t.Fatalf("%s: %v, want ErrClosed", name, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s stayed blocked after the write error", name)
		}
	}
	if err := w.Wait(); err == nil || !errors.Is(err, g.fail) {
		t.Fatalf("Wait: %v, want the write error", err)
	}
	if err := w.Send(proto.ControlQueue, ev(30, 1), nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Send after the failure: %v", err)
	}
	if ok, err := w.TrySend(ev(31, 1)); ok || !errors.Is(err, ErrClosed) {
		t.Fatalf("TrySend after the failure: %v %v", ok, err)
	}
	if counter.Unsent() != 0 || w.BulkUnsent() != 0 {
		t.Fatalf("discarded frames still counted: unsent %d, bulk %d", counter.Unsent(), w.BulkUnsent())
	}
	w.Close() // closing a failed writer is harmless
}

func TestOversizedFrameRejectedWithoutClosing(t *testing.T) {
	var buf syncBuffer
	w := New(&buf, Config{})
	huge := frame.Frame{Type: frame.Result, ID: 1, JSON: []byte(`{}`), Payload: make([]byte, frame.MaxFrame)}
	for _, q := range []proto.Queue{proto.ControlQueue, proto.BulkQueue} {
		var counter Counter
		if err := w.Send(q, huge, &counter); !errors.Is(err, frame.ErrTooLarge) {
			t.Fatalf("queue %d: %v, want ErrTooLarge", q, err)
		}
		if counter.Unsent() != 0 {
			t.Fatalf("a rejected frame was counted")
		}
	}
	if ok, err := w.TrySend(huge); ok || !errors.Is(err, frame.ErrTooLarge) {
		t.Fatalf("TrySend: %v %v", ok, err)
	}
	if err := w.Send(proto.ControlQueue, ev(2, 3), nil); err != nil {
		t.Fatalf("the writer stopped after an oversized frame: %v", err)
	}
	w.Close()
	if err := w.Wait(); err != nil {
		t.Fatal(err)
	}
	f, err := frame.NewReader(bytes.NewReader(buf.Bytes())).Next()
	if err != nil || f.ID != 2 {
		t.Fatalf("next frame: %v %v", f.ID, err)
	}
}

func TestFlushAfterEveryFrame(t *testing.T) {
	pr, pw := io.Pipe()
	w := New(pw, Config{})
	var counter Counter
	if err := w.Send(proto.ControlQueue, ev(5, 4), &counter); err != nil {
		t.Fatal(err)
	}
	// The frame must reach the pipe while the writer is still open: nothing waits in the 1 MiB buffer.
	f, err := frame.NewReader(pr).Next()
	if err != nil || f.ID != 5 || len(f.Payload) != 4 {
		t.Fatalf("frame: %+v %v", f, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for counter.Unsent() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if counter.Unsent() != 0 {
		t.Fatalf("unsent %d after the frame was read", counter.Unsent())
	}
	w.Close()
	if err := w.Wait(); err != nil {
		t.Fatal(err)
	}
	_ = pw.Close()
}

func TestTrySendSkipsWhenControlQueueFull(t *testing.T) {
	g := newGatedWriter()
	w := New(g, Config{ControlLimit: 1})
	if err := w.Send(proto.ControlQueue, ev(1, 1), nil); err != nil {
		t.Fatal(err)
	}
	<-g.entered // frame 1 is being written; the queue is empty again
	if ok, err := w.TrySend(ev(2, 1)); !ok || err != nil {
		t.Fatalf("TrySend into an empty queue: %v %v", ok, err)
	}
	if ok, err := w.TrySend(ev(3, 1)); ok || err != nil {
		t.Fatalf("TrySend into a full queue: %v %v", ok, err)
	}
	g.open()
	w.Close()
	if err := w.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := len(g.frames(t)); got != 2 {
		t.Fatalf("%d frames written, want 2", got)
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.buf.Bytes())
}

func TestSendMergingJoinsWaitingEventsInOrder(t *testing.T) {
	g := newGatedWriter()
	w := New(g, Config{})
	var counter Counter
	stdout, stderr := []byte(`{"stream":"stdout"}`), []byte(`{"stream":"stderr"}`)
	event := func(id uint32, json []byte, text string) frame.Frame {
		return frame.Frame{Type: frame.Event, ID: id, JSON: json, Payload: []byte(text)}
	}
	keyA, keyB := new(int), new(int)
	// The first frame gets stuck in the gated write: it is no longer waiting, so nothing joins it.
	sends := []struct {
		f   frame.Frame
		key any
	}{
		{event(1, stdout, "a"), keyA},
		{event(1, stdout, "b"), keyA},
		{event(1, stdout, "c"), keyA},
		{event(1, stderr, "d"), keyA},
		{event(1, stderr, "e"), keyA},
		{event(2, stderr, "f"), keyB},
		{event(1, stderr, "g"), keyA},
		{event(1, stderr, strings.Repeat("h", MaxMergedPayload)), keyA},
		{event(1, stderr, "i"), nil},
		{event(1, stderr, "j"), keyA},
	}
	for i, s := range sends {
		if err := w.SendMerging(proto.BulkQueue, s.f, &counter, s.key); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			<-g.entered
		}
	}
	if got := counter.Unsent(); got != 8 {
		t.Fatalf("%d frames counted, want 8", got)
	}
	want := 0
	for _, s := range sends {
		want += frame.HeaderSize + len(s.f.JSON) + len(s.f.Payload)
	}
	// The two joined frames no longer count their own headers and JSON; the frame being written still counts.
	want -= 2 * (frame.HeaderSize + len(stdout))
	if got := w.BulkUnsent(); got != want {
		t.Fatalf("BulkUnsent accounts %d bytes, want %d", got, want)
	}
	var got []string
	for _, f := range g.drain(t, w) {
		text := string(f.Payload)
		if len(text) > 10 {
			text = text[:1] + "…" + text[len(text)-1:]
		}
		got = append(got, fmt.Sprintf("%d%s:%s", f.ID, string(f.JSON[11:17]), text))
	}
	wantFrames := []string{"1stdout:a", "1stdout:bc", "1stderr:de", "2stderr:f", "1stderr:g", "1stderr:h…h",
		"1stderr:i", "1stderr:j"}
	if fmt.Sprint(got) != fmt.Sprint(wantFrames) {
		t.Fatalf("frames %v, want %v", got, wantFrames)
	}
	if counter.Unsent() != 0 || w.BulkUnsent() != 0 {
		t.Fatalf("after drain: counter %d, bulk %d", counter.Unsent(), w.BulkUnsent())
	}
}

// TestWrittenCalledOnceAfterTheWrite: a frame's Written callback runs exactly once, only after its bytes were
// handed to the output (so its memory may be reused), and also for frames a write error discards.
func TestWrittenCalledOnceAfterTheWrite(t *testing.T) {
	g := newGatedWriter()
	w := New(g, Config{})
	var calls [3]atomic.Int32
	withWritten := func(i int, f frame.Frame) frame.Frame {
		f.Written = func() { calls[i].Add(1) }
		return f
	}
	if err := w.Send(proto.BulkQueue, withWritten(0, ev(1, 100<<10)), nil); err != nil {
		t.Fatal(err)
	}
	<-g.entered
	if n := calls[0].Load(); n != 0 {
		t.Fatalf("Written ran %d times while the frame was still being written", n)
	}
	g.mu.Lock()
	g.fail = errors.New("broken pipe")
	g.mu.Unlock()
	// Queued behind the blocked write; the write error will discard them.
	for i := 1; i < 3; i++ {
		if err := w.Send(proto.ControlQueue, withWritten(i, ev(uint32(i+1), 10)), nil); err != nil {
			t.Fatal(err)
		}
	}
	g.open()
	if err := w.Wait(); err == nil {
		t.Fatal("the write error was not reported")
	}
	for i := range calls {
		if n := calls[i].Load(); n != 1 {
			t.Fatalf("frame %d: Written ran %d times, want once", i, n)
		}
	}
}

// sendNowHeld calls SendNow on its own goroutine, checks that it has not returned 20 ms after started() (why says
// what it waits for), then lets the writes through and checks that it returns without error.
func sendNowHeld(t *testing.T, g *gatedWriter, w *Writer, f frame.Frame, started func(), why string) {
	t.Helper()
	sent := make(chan error, 1)
	go func() { sent <- w.SendNow(f) }()
	started()
	select {
	case err := <-sent:
		t.Fatalf("SendNow returned (%v) %s", err, why)
	case <-time.After(20 * time.Millisecond):
	}
	g.open()
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
}

func TestSendNowWritesFromTheCaller(t *testing.T) {
	g := newGatedWriter()
	w := New(g, Config{})
	sendNowHeld(t, g, w, ev(1, 1), func() { <-g.entered }, "before its frame was written")
	if frames := g.frames(t); len(frames) != 1 || frames[0].ID != 1 {
		t.Fatalf("written: %+v", frames)
	}
	w.Close()
	if err := w.Wait(); err != nil {
		t.Fatal(err)
	}
}

func TestSendNowQueuesBehindFramesWaitingOrBeingWritten(t *testing.T) {
	g := newGatedWriter()
	w := New(g, Config{})
	if err := w.Send(proto.ControlQueue, ev(1, 1), nil); err != nil {
		t.Fatal(err)
	}
	<-g.entered // frame 1 is being written by the writer goroutine, the queue is empty
	for _, id := range []uint32{2, 3} {
		if err := w.SendNow(ev(id, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Send(proto.BulkQueue, ev(4, 1), nil); err != nil {
		t.Fatal(err)
	}
	if err := w.SendNow(ev(5, 1)); err != nil {
		t.Fatal(err)
	}
	var ids []uint32
	for _, f := range g.drain(t, w) {
		ids = append(ids, f.ID)
	}
	// Queued, SendNow's frames keep the writer's order: control frames first, then bulk.
	if fmt.Sprint(ids) != "[1 2 3 5 4]" {
		t.Fatalf("order %v", ids)
	}
}

func TestSendNowWriteErrorStopsTheWriter(t *testing.T) {
	g := newGatedWriter()
	g.fail = errors.New("broken pipe")
	w := New(g, Config{})
	sent := make(chan error, 1)
	go func() { sent <- w.SendNow(ev(1, 1)) }()
	<-g.entered
	g.open()
	<-sent
	waitClosed(t, w.Done(), "the writer's stop after SendNow's failed write")
	if err := w.Wait(); !errors.Is(err, g.fail) {
		t.Fatalf("Wait: %v, want the write error", err)
	}
	if err := w.SendNow(ev(2, 1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("SendNow after the failure: %v", err)
	}
}

// Frames queued while SendNow's caller writes are the writer goroutine's once that write is done: their wake-up
// went to a writer that had to let SendNow write, so SendNow must wake it again.
func TestFramesQueuedDuringSendNowAreWritten(t *testing.T) {
	for _, queue := range []proto.Queue{proto.ControlQueue, proto.BulkQueue} {
		g := newGatedWriter()
		w := New(g, Config{})
		sent := make(chan error, 1)
		go func() { sent <- w.SendNow(ev(1, 1)) }()
		<-g.entered
		if err := w.Send(queue, ev(2, 1), nil); err != nil {
			t.Fatal(err)
		}
		// Time for the writer goroutine to take that wake-up and find SendNow writing.
		time.Sleep(20 * time.Millisecond)
		g.open()
		if err := <-sent; err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for len(g.frames(t)) < 2 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if frames := g.frames(t); len(frames) != 2 || frames[1].ID != 2 {
			t.Fatalf("queue %d: written %d frames, want the queued one after SendNow's", queue, len(frames))
		}
		w.Close()
		if err := w.Wait(); err != nil {
			t.Fatal(err)
		}
	}
}

// Queued, SendNow's frame waits for room in the control queue like any control frame: the queue stays bounded.
func TestSendNowQueuedWaitsForControlRoom(t *testing.T) {
	g := newGatedWriter()
	w := New(g, Config{ControlLimit: 1})
	if err := w.Send(proto.ControlQueue, ev(1, 1), nil); err != nil {
		t.Fatal(err)
	}
	<-g.entered // frame 1 is being written
	if err := w.Send(proto.ControlQueue, ev(2, 1), nil); err != nil {
		t.Fatal(err)
	}
	sendNowHeld(t, g, w, ev(3, 1), func() {}, "while the control queue was full")
	w.Close()
	if err := w.Wait(); err != nil {
		t.Fatal(err)
	}
	var ids []uint32
	for _, f := range g.frames(t) {
		ids = append(ids, f.ID)
	}
	if fmt.Sprint(ids) != "[1 2 3]" {
		t.Fatalf("order %v", ids)
	}
}
