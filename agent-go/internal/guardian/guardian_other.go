//go:build !linux

package guardian

// Supported reports whether this platform runs the agent under a guardian: only Linux has the child
// subreaper the guardian needs.
const Supported = false

// Lifeline reports false: without a guardian there is no lifeline.
func Lifeline() (gone <-chan struct{}, ok bool) { return nil, false }

// Run is never called where Supported is false; it reports that no server was started.
func Run([]string) (status int, ok bool) { return 0, false }
