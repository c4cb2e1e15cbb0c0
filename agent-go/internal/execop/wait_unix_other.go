//go:build unix && !linux

package execop

// waitExit blocks until the process exited and reaps it (no portable wait-without-reaping here); afterwards
// killTree signals only the group.
func (c *child) waitExit() {
	state, _ := c.proc.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state, c.reaped = state, true
}
