// Command benchfloor is a bench anchor: the least a Go process can do to answer over its stdin and stdout — copy
// every byte it reads back out, as `cat` does, with no framing, JSON or dispatch. Run as `benchfloor` it reads
// stdin the way Go reads a pipe it was given (blocking reads on an OS thread), as the agent does; `benchfloor
// -poller` first puts stdin and stdout in non-blocking mode, so reads and writes wait in Go's network poller. The
// two against `cat` tell what the Go runtime costs a round trip before the agent does any work of its own.
package main

import (
	"flag"
	"fmt"
	"os"
	"syscall"
)

func main() {
	poller := flag.Bool("poller", false, "non-blocking stdin and stdout, waiting in Go's network poller")
	flag.Parse()
	in, out := os.Stdin, os.Stdout
	if *poller {
		in, out = nonBlocking(in), nonBlocking(out)
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := in.Read(buf)
		if n > 0 {
			if _, werr := out.Write(buf[:n]); werr != nil {
				fmt.Fprintln(os.Stderr, "benchfloor:", werr)
				os.Exit(1)
			}
		}
		if err != nil {
			return
		}
	}
}

// nonBlocking reopens f in non-blocking mode, so that Go's poller waits for it.
func nonBlocking(f *os.File) *os.File {
	fd := f.Fd()
	if err := syscall.SetNonblock(int(fd), true); err != nil {
		fmt.Fprintln(os.Stderr, "benchfloor:", err)
		os.Exit(1)
	}
	return os.NewFile(fd, f.Name())
}
