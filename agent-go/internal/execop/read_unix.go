//go:build unix

package execop

import (
	"errors"
	"sync"

	"golang.org/x/sys/unix"
)

// maxReadsPerWakeup bounds the reads of one stream per readiness report, as libuv bounds them (32), so a
// stream that never runs dry cannot starve the other.
const maxReadsPerWakeup = 32

// errStopped is what a poller's wait returns once reading was stopped.
var errStopped = errors.New("output reading stopped")

// poller waits on a command's stdout and stderr descriptors together.
type poller interface {
	// watch starts watching both streams, stdout first; it is called once, right after the child started. As
	// under Node (libuv registers the descriptors once the child runs), output both streams already hold then is
	// read stdout first.
	watch() error
	// wait blocks until at least one watched stream is readable (data, end of file or an error) and appends the
	// readable streams to ready in the order they became readable. It returns errStopped once stop was called.
	wait(ready []int) ([]int, error)
	// forget stops watching a stream that reached its end.
	forget(stream int)
	// stop makes a pending wait and every later one return errStopped; it may be called from any goroutine.
	stop()
	// close releases the poller; it is called once, after the last wait returned.
	close()
}

// readOutput starts the command's single reader: one goroutine that waits on stdout and stderr together and
// reads whichever became readable first, in readiness order, as libuv's event loop reads a child's stdio under
// Node (spec X20). Each report of a stream is answered with reads until the stream has nothing more (a short
// read), at most maxReadsPerWakeup of them. ended receives one value per stream at its end of file; activity
// is signalled after each chunk. The returned stop ends reading (unread data is discarded), waits for the
// reader and closes both descriptors.
func (c *command) readOutput(activity, ended chan<- struct{}) (stop func()) {
	ch := c.child
	var reader sync.WaitGroup
	reader.Add(1)
	go func() {
		defer reader.Done()
		c.readStreams(ch.poller, ch.fds, activity, ended)
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			ch.poller.stop()
			reader.Wait()
			ch.poller.close()
			ch.closeFds()
		})
	}
}

// readStreams is the reader loop: wait, then read every reported stream in the reported order.
func (c *command) readStreams(p poller, fds [2]int, activity, ended chan<- struct{}) {
	buf := make([]byte, readBuffer)
	ready := make([]int, 0, 2)
	open := 2
	for open > 0 {
		var err error
		ready, err = p.wait(ready[:0])
		if err != nil {
			return
		}
		for _, stream := range ready {
			if c.drain(stream, fds[stream], buf, activity) {
				p.forget(stream)
				open--
				ended <- struct{}{}
			}
		}
	}
}

// drain reads one reported stream until it has nothing more for now; it reports whether the stream ended. A
// read error ends the stream, as it ends a Node socket.
func (c *command) drain(stream, fd int, buf []byte, activity chan<- struct{}) (ended bool) {
	for reads := 0; reads < maxReadsPerWakeup; {
		n, err := unix.Read(fd, buf)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			return false
		case err != nil || n == 0:
			return true
		}
		reads++
		c.out.chunk(stream, buf[:n])
		signal(activity)
		if n < len(buf) {
			return false
		}
	}
	return false
}
