//go:build !(darwin || linux || openbsd)

package output

import "io"

// newVectorSink has no vectored writer on this platform; the copying writer is used.
func newVectorSink(io.Writer) sink { return nil }
