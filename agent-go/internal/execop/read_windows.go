//go:build windows

package execop

import "sync"

// readOutput starts one reader per pipe. Windows has no readiness wait over anonymous pipes, so each pipe is
// read by a goroutine of its own and the order between the streams is the order in which the reads return
// (spec X20). ended receives one value per stream at its end; activity is signalled after each chunk. The
// returned stop interrupts both reads, waits for the readers and releases the pipes.
func (c *command) readOutput(activity, ended chan<- struct{}) (stop func()) {
	var readers sync.WaitGroup
	for stream, pipe := range c.child.pipes() {
		readers.Add(1)
		go func() {
			defer readers.Done()
			c.read(stream, pipe, activity)
			ended <- struct{}{}
		}()
	}
	return func() {
		c.child.closePipes()
		readers.Wait()
	}
}

// read forwards one pipe's chunks until EOF or until the pipe is closed at settle time.
func (c *command) read(stream int, pipe pipeReader, activity chan<- struct{}) {
	buf := make([]byte, readBuffer)
	for {
		n, err := pipe.Read(buf)
		if n > 0 {
			c.out.chunk(stream, buf[:n])
			signal(activity)
		}
		if err != nil {
			return
		}
	}
}
