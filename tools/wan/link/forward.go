package main

import (
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// maxPacket is the largest packet a TUN device hands over (its MTU is set far lower; this only sizes the buffer).
const maxPacket = 65535

// maxHeld bounds the packets a direction holds at once (queued plus in flight on the delay), and so its memory:
// the deepest profile holds a few hundred full packets.
const maxHeld = 8192

// Counters are one direction's packet counts since the link started.
type Counters struct {
	In        uint64 `json:"in"`
	Out       uint64 `json:"out"`
	DropLoss  uint64 `json:"dropLoss"`
	DropQueue uint64 `json:"dropQueue"`
	Bytes     uint64 `json:"bytesOut"`
}

type counters struct{ in, out, dropLoss, dropQueue, bytes atomic.Uint64 }

func (c *counters) snapshot() Counters {
	return Counters{c.in.Load(), c.out.Load(), c.dropLoss.Load(), c.dropQueue.Load(), c.bytes.Load()}
}

type held struct {
	data []byte
	due  time.Time
}

// direction moves packets from one TUN device to the other through a line.
type direction struct {
	line  *line
	stats counters
}

// run forwards until src fails (it is closed on shutdown); it returns once both of its goroutines have ended.
func (d *direction) run(src io.Reader, dst io.Writer) error {
	queue := make(chan held, maxHeld)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		d.deliver(queue, dst)
	}()
	err := d.receive(src, queue)
	close(queue)
	wg.Wait()
	if errors.Is(err, os.ErrClosed) {
		return nil
	}
	return err
}

// receive reads one packet per Read (a TUN device's unit) and queues it with its departure time.
func (d *direction) receive(src io.Reader, queue chan<- held) error {
	buf := make([]byte, maxPacket)
	for {
		n, err := src.Read(buf)
		if err != nil {
			return err
		}
		d.stats.in.Add(1)
		due, verdict := d.line.admit(time.Now(), n)
		switch verdict {
		case DropLoss:
			d.stats.dropLoss.Add(1)
			continue
		case DropQueue:
			d.stats.dropQueue.Add(1)
			continue
		}
		select {
		case queue <- held{data: append([]byte(nil), buf[:n]...), due: due}:
		default:
			d.stats.dropQueue.Add(1)
		}
	}
}

// deliver writes each packet at its departure time. A write error (the far device going away) drops the packet:
// the link, like a wire, reports nothing back.
func (d *direction) deliver(queue <-chan held, dst io.Writer) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for p := range queue {
		if wait := time.Until(p.due); wait > 0 {
			timer.Reset(wait)
			<-timer.C
		}
		if _, err := dst.Write(p.data); err == nil {
			d.stats.out.Add(1)
			d.stats.bytes.Add(uint64(len(p.data)))
		}
	}
}
