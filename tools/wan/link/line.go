package main

import (
	"math/rand/v2"
	"sync"
	"time"
)

// Shape is what one direction of the link does to a packet: the one-way delay it adds, the rate it is serialised
// at, and the share of packets it drops.
type Shape struct {
	Delay time.Duration
	// RateBits is the link's rate in bits per second; 0 means unlimited (no serialisation time, no queue).
	RateBits float64
	// Loss is the probability, from 0 to 1, that a packet is dropped.
	Loss float64
}

// queueFloor is the least a capped link queues before it drops (a router's buffer): about 40 full packets, so a
// slow link with a short delay still absorbs a burst.
const queueFloor = 64 << 10

// queueLimit is how long a packet may wait for the serialiser before the link drops it: one round trip's worth
// of data (a bandwidth-delay product of buffer, the usual sizing of a router queue), at least queueFloor bytes.
func (s Shape) queueLimit() time.Duration {
	floor := time.Duration(float64(queueFloor*8) / s.RateBits * float64(time.Second))
	return max(2*s.Delay, floor)
}

// Verdict is what the line decided for one packet.
type Verdict int

const (
	Pass Verdict = iota
	DropLoss
	DropQueue
)

// line is the model of one direction: a FIFO serialiser at the shape's rate, a tail-drop queue in front of it, a
// random loss, then the fixed delay. It only computes times; the forwarder moves the bytes.
type line struct {
	mu    sync.Mutex
	shape Shape
	// free is when the serialiser finishes the last packet it accepted.
	free time.Time
	rng  *rand.Rand
}

func newLine(shape Shape, seed uint64) *line {
	return &line{shape: shape, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

func (l *line) setShape(shape Shape) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.shape = shape
}

func (l *line) currentShape() Shape {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.shape
}

// admit decides the fate of a packet of size bytes that arrives at now, and when it leaves the far end if it
// passes. Departure times never decrease, so the forwarder can deliver in arrival order.
func (l *line) admit(now time.Time, size int) (time.Time, Verdict) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shape.Loss > 0 && l.rng.Float64() < l.shape.Loss {
		return time.Time{}, DropLoss
	}
	start := now
	if l.free.After(start) {
		start = l.free
	}
	if l.shape.RateBits > 0 {
		if start.Sub(now) > l.shape.queueLimit() {
			return time.Time{}, DropQueue
		}
		start = start.Add(time.Duration(float64(size*8) / l.shape.RateBits * float64(time.Second)))
	}
	l.free = start
	return start.Add(l.shape.Delay), Pass
}
