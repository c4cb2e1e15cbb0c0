package main

import (
	"bytes"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var t0 = time.Unix(1_000_000, 0)

func TestDelayOnlyAddsTheOneWayDelay(t *testing.T) {
	l := newLine(Shape{Delay: 25 * time.Millisecond}, 1)
	for i := range 3 {
		now := t0.Add(time.Duration(i) * time.Millisecond)
		due, verdict := l.admit(now, 1500)
		if verdict != Pass || !due.Equal(now.Add(25*time.Millisecond)) {
			t.Fatalf("packet %d: due %v verdict %v, want %v Pass", i, due.Sub(t0), verdict, now.Add(25*time.Millisecond).Sub(t0))
		}
	}
}

func TestRateSerialisesBackToBackPackets(t *testing.T) {
	// 12 Mbit/s: a 1500-byte packet takes exactly 1 ms on the wire.
	l := newLine(Shape{Delay: 10 * time.Millisecond, RateBits: 12e6}, 1)
	for i := range 5 {
		due, verdict := l.admit(t0, 1500)
		want := t0.Add(time.Duration(i+1)*time.Millisecond + 10*time.Millisecond)
		if verdict != Pass || !due.Equal(want) {
			t.Fatalf("packet %d: due %v, want %v", i, due.Sub(t0), want.Sub(t0))
		}
	}
	// After the queue has drained, a packet waits only for its own serialisation.
	later := t0.Add(time.Second)
	if due, _ := l.admit(later, 1500); !due.Equal(later.Add(11 * time.Millisecond)) {
		t.Fatalf("idle link: due %v after arrival, want 11ms", due.Sub(later))
	}
}

func TestFullQueueDropsTheTail(t *testing.T) {
	// 12 Mbit/s, 10 ms one way: the queue holds 2×10 ms = 20 ms but at least 64 KiB (≈ 43.7 ms at this rate).
	shape := Shape{Delay: 10 * time.Millisecond, RateBits: 12e6}
	l := newLine(shape, 1)
	passed := 0
	for range 100 {
		if _, verdict := l.admit(t0, 1500); verdict == Pass {
			passed++
		} else if verdict != DropQueue {
			t.Fatalf("verdict %v, want DropQueue", verdict)
		}
	}
	// A packet is accepted while the serialiser's backlog is at most the queue limit: 44 waits of 1 ms, plus one.
	if limit := shape.queueLimit(); passed != int(limit/time.Millisecond)+1 {
		t.Fatalf("%d packets passed a burst of 100 with a %v queue", passed, limit)
	}
}

func TestLossDropsItsShare(t *testing.T) {
	l := newLine(Shape{Loss: 0.02}, 7)
	dropped := 0
	const n = 100_000
	for range n {
		if _, verdict := l.admit(t0, 100); verdict == DropLoss {
			dropped++
		}
	}
	// Binomial(100000, 0.02): mean 2000, standard deviation ≈ 44; the seed is fixed, so this is deterministic.
	if dropped < 1800 || dropped > 2200 {
		t.Fatalf("dropped %d of %d at 2%% loss", dropped, n)
	}
}

func TestParseShape(t *testing.T) {
	shape, err := parseShape(profiles["wan"], []string{"delay=75ms", "loss=0.5"})
	if err != nil || shape.Delay != 75*time.Millisecond || shape.Loss != 0.5 || shape.RateBits != 100e6 {
		t.Fatalf("got %+v, %v", shape, err)
	}
	for _, bad := range []string{"loss=2", "delay=-1ms", "rate", "speed=1"} {
		if _, err := parseShape(profiles["wan"], []string{bad}); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}

// packetPipe hands over whole packets, as a TUN device does.
type packetPipe struct {
	packets chan []byte
	closed  chan struct{}
	once    sync.Once
}

func newPacketPipe() *packetPipe {
	return &packetPipe{packets: make(chan []byte, 16), closed: make(chan struct{})}
}

func (p *packetPipe) Read(buf []byte) (int, error) {
	select {
	case packet := <-p.packets:
		return copy(buf, packet), nil
	case <-p.closed:
		return 0, os.ErrClosed
	}
}

func (p *packetPipe) Close() { p.once.Do(func() { close(p.closed) }) }

type recorder struct {
	mu      sync.Mutex
	packets [][]byte
	got     chan struct{}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.mu.Lock()
	r.packets = append(r.packets, append([]byte(nil), b...))
	r.mu.Unlock()
	r.got <- struct{}{}
	return len(b), nil
}

func TestDirectionForwardsInOrderAndStopsWhenItsSourceCloses(t *testing.T) {
	src := newPacketPipe()
	dst := &recorder{got: make(chan struct{}, 16)}
	d := &direction{line: newLine(Shape{Delay: time.Millisecond}, 1)}
	done := make(chan error, 1)
	go func() { done <- d.run(src, dst) }()
	want := [][]byte{[]byte("one"), []byte("two"), []byte("three")}
	for _, packet := range want {
		src.packets <- packet
	}
	for range want {
		<-dst.got
	}
	src.Close()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	for i, packet := range want {
		if !bytes.Equal(dst.packets[i], packet) {
			t.Fatalf("packet %d: %q, want %q", i, dst.packets[i], packet)
		}
	}
	if c := d.stats.snapshot(); c.In != 3 || c.Out != 3 || c.Bytes != 11 {
		t.Fatalf("counters %+v", c)
	}
}

var _ io.Reader = (*packetPipe)(nil)
