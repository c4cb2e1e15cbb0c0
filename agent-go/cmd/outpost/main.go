// Command outpost is the Outpost agent: it runs on the target machine and serves file operations, commands,
// watches and listFiles over pi-env protocol 1 on stdin/stdout.
//
//	outpost serve --token <hex>   speak the protocol; the token is echoed in the sync line
//	outpost --version             print "outpost <version>"
//	outpost version [--json]      version, protocol, platform and the binary's SHA-256 (for ops tools)
//	outpost install [--dir D]     copy itself to where the SDK deploys it (~/.outpost/bin/outpost-<sha256>)
//	outpost doctor [--json]       the machine's readiness (shell, tmpdir, clock, watch mode, limits, orphans)
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"syscall"

	"github.com/outpost-dev/outpost/agent-go/internal/execop"
	"github.com/outpost-dev/outpost/agent-go/internal/frame"
	"github.com/outpost-dev/outpost/agent-go/internal/fsops"
	"github.com/outpost-dev/outpost/agent-go/internal/guardian"
	"github.com/outpost-dev/outpost/agent-go/internal/listfiles"
	"github.com/outpost-dev/outpost/agent-go/internal/opscmd"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
	"github.com/outpost-dev/outpost/agent-go/internal/reaper"
	"github.com/outpost-dev/outpost/agent-go/internal/search"
	"github.com/outpost-dev/outpost/agent-go/internal/server"
	"github.com/outpost-dev/outpost/agent-go/internal/sigreset"
	"github.com/outpost-dev/outpost/agent-go/internal/sysinfo"
	"github.com/outpost-dev/outpost/agent-go/internal/version"
	"github.com/outpost-dev/outpost/agent-go/internal/watch"
)

const usage = "usage: outpost serve --token <hex>\n       outpost --version\n" + opscmd.Usage

func main() {
	// First, before any goroutine starts processes: every child gets default signal dispositions and an empty
	// signal mask, whatever the agent inherited (this may re-execute the agent once).
	sigreset.Ensure()

	limitProcs()
	if guardian.Supported && isServe(os.Args[1:]) {
		if gone, ok := guardian.Lifeline(); ok {
			guardianGone = gone
		} else if status, ok := guardian.Run([]string{sigreset.ChildEnv()}); ok {
			os.Exit(status)
		}
		// No guardian could be started: serve without one.
	}
	// Orphans of commands are re-parented to the agent, which kills them (Linux; see internal/reaper).
	reaper.Become()
	// The exit is explicit: handler goroutines may still be blocked (a FIFO open, a read of stdin).
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// guardianGone, in a server started by a guardian, is closed when the guardian died (see internal/guardian);
// it ends the connection like a termination signal.
var guardianGone <-chan struct{}

// isServe reports whether args are a valid serve command line.
func isServe(args []string) bool {
	return len(args) == 3 && args[0] == "serve" && args[1] == "--token" && isHex(args[2])
}

// tuneStdio prepares the connection's streams for throughput and latency: larger kernel buffers, and stdin read
// by blocking reads that first let ready goroutines run (yieldingReader). Streams that are not files (tests) are
// returned as they are.
func tuneStdio(stdin io.Reader, stdout io.Writer) io.Reader {
	if out, ok := stdout.(*os.File); ok {
		enlargeBuffer(out, true)
	}
	in, ok := stdin.(*os.File)
	if !ok {
		return stdin
	}
	enlargeBuffer(in, false)
	// Both streams stay blocking. In the poller, stdin costs a wake-up through epoll per request (see
	// yieldingReader), and stdout, a socket, would wake the poller each time the peer reads, once per reply.
	return yieldingReader{in: in}
}

// limitProcs runs Go code on one P unless the operator set GOMAXPROCS. The agent's work is system calls and
// short bursts of Go code handed between goroutines (reader, pool worker, writer); with an idle second P every
// such hand-off wakes another thread that finds nothing to do. Measured on a 2-core machine, one P halves the
// agent's CPU time per request and removes context switches from each round trip. A system call that blocks
// still gets a thread of its own: the runtime hands the P on when a call does not return promptly.
// With stdin read by blocking reads, a second P would also wake a second thread for every request the reader
// hands on (measured: 3.7–4.5× the round trip of one P with yieldingReader).
func limitProcs() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}

// run is the whole command line behaviour; it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 1 && args[0] == "--version":
		fmt.Fprintf(stdout, "outpost %s\n", version.Version)
		return 0
	case isServe(args):
		return serve(args[2], stdin, stdout, stderr)
	}
	if status, handled := opscmd.Run(args, stdout, stderr); handled {
		return status
	}
	fmt.Fprintln(stderr, usage)
	return 2
}

// isHex reports whether token is a non-empty string of hex digits.
func isHex(token string) bool {
	if token == "" {
		return false
	}
	for _, c := range token {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// serve runs one connection on stdin/stdout. Its status is 0 whenever the connection ended (input closed,
// broken framing, silence, a termination signal) and 1 for an I/O failure.
func serve(token string, stdin io.Reader, stdout, stderr io.Writer) int {
	// A write to a closed stdout must fail with EPIPE, not kill the agent before it can kill its commands. A
	// handled (not ignored) signal is reset to the default in children, so commands still see SIGPIPE.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	// A termination signal ends the connection like EOF does, so the agent kills its commands before it exits.
	stop := make(chan struct{})
	// A signal the launcher left ignored (SIGHUP under nohup, say) stays ignored by the agent itself.
	terminate := make(chan os.Signal, 1)
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM} {
		if !sigreset.IgnoredAtStart(sig) {
			signal.Notify(terminate, sig)
		}
	}
	defer signal.Stop(terminate)
	served := make(chan struct{})
	defer close(served)
	go func() {
		select {
		case <-terminate:
			close(stop)
		case <-guardianGone:
			close(stop)
		case <-served:
		}
	}()

	watches := watch.New()
	cfg := serverConfig(token, stop, watches)
	if in, ok := stdin.(*os.File); ok {
		cfg.PeerGone = func() bool { return hungUp(in) }
	}
	stdin = tuneStdio(stdin, stdout)
	err := server.Serve(stdin, stdout, cfg)
	// Every watcher stops with the connection.
	watches.CloseAll()
	switch {
	case err == nil:
		return 0
	case errors.Is(err, frame.ErrFraming), errors.Is(err, server.ErrSilence), errors.Is(err, server.ErrStopped):
		fmt.Fprintf(stderr, "outpost: %v\n", err)
		return 0
	default:
		fmt.Fprintf(stderr, "outpost: %v\n", err)
		return 1
	}
}

// serverConfig is the connection's configuration: the real file operations, commands and watchers, and every
// timing and queue size left at the server's defaults.
func serverConfig(token string, stop <-chan struct{}, watches *watch.Service) server.Config {
	info := sysinfo.Current()
	return server.Config{
		Token:    token,
		Info:     &info,
		Files:    fsops.New(),
		Features: append(slices.Clone(fsops.SameHostFeatures), fsops.Features...),
		Commands: execop.New(info.TempDir),
		// Operations that each run on a goroutine of their own: a watcher lives as long as its request, and a
		// walk of a large tree must not hold a pool worker.
		Dedicated: map[string]proto.Handler{"watch": watches.Handle, "listFiles": listfiles.Handle,
			"searchFiles": search.Handle},
		Stop: stop,
	}
}
