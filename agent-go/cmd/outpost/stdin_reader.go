package main

import (
	"io"
	"runtime"
)

// yieldingReader reads the agent's stdin with plain blocking reads, letting every goroutine that is ready to run
// go first.
//
// Why blocking: a thread woken from a blocking read of a pipe or socket is woken by the writer itself, on the
// writer's CPU; a thread parked in Go's network poller is woken through epoll, and when every goroutine is parked
// the runtime's monitor thread sleeps too and must be woken on the first system call. On an idle 2-core VM that
// costs each request round trip ~70–100 µs against ~15 µs for `cat` (measured: tools/benchfloor, issue 13).
//
// Why the yield: the agent runs Go code on one P (limitProcs), and a goroutine blocked in a read keeps that P
// until the runtime's monitor takes it back (20 µs up to 10 ms later). The reader hands each request to another
// goroutine (a pool worker, the output writer); yielding before each read lets them run, and the reply go out,
// before the reader blocks, instead of after the P was taken back. It yields twice: a yielding goroutine waits in
// the scheduler's global queue, which the scheduler serves first on every 61st round, so one yield in ~30 came
// straight back to the reader (measured) while a worker was still ready; the second yield covers that round.
type yieldingReader struct{ in io.Reader }

func (r yieldingReader) Read(p []byte) (int, error) {
	runtime.Gosched()
	runtime.Gosched()
	return r.in.Read(p)
}
