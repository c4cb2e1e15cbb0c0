// Package server runs one protocol 1 connection: it prints the sync line, reads frames, registers a control
// for every request before dispatching it, routes operations to their handlers (inline, a bounded worker pool,
// one goroutine per command, or the file-ops chunk writer), writes replies through the output writer, sends
// pings and shuts everything down when the input ends, breaks or falls silent.
package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outpost-dev/outpost/agent-go/internal/frame"
	"github.com/outpost-dev/outpost/agent-go/internal/output"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
	"github.com/outpost-dev/outpost/agent-go/internal/sysinfo"
)

// Defaults of Config.
const (
	// DefaultPingInterval is how often the agent pings and checks for silence.
	DefaultPingInterval = 5 * time.Second
	// DefaultSilenceLimit is how long the input may stay without a single byte before the agent gives up.
	DefaultSilenceLimit = 30 * time.Second
	// DefaultWorkers is the size of the file-operation pool.
	DefaultWorkers = 16
	// DefaultQueueDepth is how many pool jobs may wait before the reader stops reading (backpressure).
	DefaultQueueDepth = 64
	// DefaultPayloadBudget bounds the bytes of request frames (JSON and payload, every kind of request) read
	// and not yet released by their handlers, per connection. Requests are read ahead of their handling (a
	// queued write, a chunk for a slow disk, an exec), so a client could otherwise make the agent hold any
	// amount of request data; at the limit the reader stops reading, and the client's writes back up in the
	// pipe. 64 MiB keeps several maximum-size frames (16 MiB) in flight, enough to keep a fast disk busy.
	DefaultPayloadBudget = 64 << 20
	// DefaultMaxDedicated bounds the operations running on their own goroutine (exec, watch).
	DefaultMaxDedicated = 4096
	// DefaultExitGrace bounds how long shutdown waits for the writer to flush what is queued and for the
	// goroutines of the connection to end.
	DefaultExitGrace = 2 * time.Second
	// ControlPayload is the largest reply payload that still goes to the control queue.
	ControlPayload = 64 << 10
	// Protocol is the protocol version hello reports.
	Protocol = 1
)

// ErrSilence ends a connection whose input stayed silent longer than the silence limit.
var ErrSilence = errors.New("no input within the silence limit")

// ErrStopped ends a connection whose Config.Stop fired.
var ErrStopped = errors.New("stopped")

// FileOps is what the server needs from the file operations (internal/fsops).
type FileOps interface {
	// Handlers returns the file operations served by the worker pool, by op name.
	Handlers() map[string]proto.Handler
	// WriteChunk starts one chunk write; it is called from the reader in arrival order, must not block, and
	// calls done exactly once when the chunk is written or failed.
	WriteChunk(call *proto.Call, done func(proto.Reply, error))
	// CloseAll closes every handle when the connection ends.
	CloseAll()
}

// Commands is what the server needs from command execution (internal/execop).
type Commands interface {
	// Handle runs one exec request to its end; the server calls it on a goroutine of its own.
	Handle(call *proto.Call) (proto.Reply, error)
	// KillAll is called once when the connection ends: it kills every command still running and, from then on,
	// every command as soon as it exists (an exec being spawned right now), so none outlives the agent.
	KillAll()
}

// Config is a connection's collaborators and timings. Zero timings and sizes take the defaults.
type Config struct {
	// Token is echoed in the sync line "PI-ENV <token>".
	Token string
	// Files serves the file operations and writeChunk; nil serves none.
	Files FileOps
	// Commands serves exec; nil makes exec an unknown operation.
	Commands Commands
	// Handlers adds operations served by the worker pool (e.g. listFiles).
	Handlers map[string]proto.Handler
	// Dedicated adds operations that each run on a goroutine of their own (e.g. watch).
	Dedicated map[string]proto.Handler
	// Features are extra names for hello's features list; ops beyond protocol 1 are added automatically.
	Features []string
	// Info describes the machine for hello; nil means sysinfo.Current() at start.
	Info *sysinfo.Info
	// Log receives diagnostics meant for the operator (a handler's panic); nil means os.Stderr.
	Log io.Writer
	// Stop, when it fires, ends the connection as if the input had ended (the agent got SIGTERM, say).
	Stop <-chan struct{}

	PingInterval time.Duration
	SilenceLimit time.Duration
	Workers      int
	QueueDepth   int
	// PayloadBudget bounds the request bytes held at once (see DefaultPayloadBudget).
	PayloadBudget int
	// PeerGone, when set, tells whether the client has hung up its end of the input even though unread bytes
	// may remain (POLLHUP on a pipe or socket). It keeps a connection whose reader is held back from counting
	// as alive once nobody can ever write to it again.
	PeerGone     func() bool
	MaxDedicated int
	ExitGrace    time.Duration
	Output       output.Config
}

// WithDefaults returns the config Serve actually runs with: every zero timing and size replaced by its default,
// a nil Log by os.Stderr and a nil Info by the current machine's.
func (c Config) WithDefaults() Config {
	if c.PingInterval <= 0 {
		c.PingInterval = DefaultPingInterval
	}
	if c.SilenceLimit <= 0 {
		c.SilenceLimit = DefaultSilenceLimit
	}
	if c.Workers <= 0 {
		c.Workers = DefaultWorkers
	}
	if c.QueueDepth <= 0 {
		c.QueueDepth = DefaultQueueDepth
	}
	if c.PayloadBudget <= 0 {
		c.PayloadBudget = DefaultPayloadBudget
	}
	if c.MaxDedicated <= 0 {
		c.MaxDedicated = DefaultMaxDedicated
	}
	if c.ExitGrace <= 0 {
		c.ExitGrace = DefaultExitGrace
	}
	c.Output = c.Output.WithDefaults()
	if c.Log == nil {
		c.Log = os.Stderr
	}
	if c.Info == nil {
		info := sysinfo.Current()
		c.Info = &info
	}
	return c
}

// server is the state of one connection.
type server struct {
	cfg       Config
	out       *output.Writer
	pool      map[string]proto.Handler
	dedicated map[string]proto.Handler
	features  []string

	controlsMu sync.Mutex
	controls   map[uint32]*proto.Control

	jobs      chan job
	budget    payloadBudget
	blocked   atomic.Int32 // > 0 while the reader waits for room (backpressure, not silence)
	running   atomic.Int64 // dedicated goroutines alive
	answering atomic.Int64 // requests read and not yet answered, but for the long-lived ones (answersSoon)
	start     time.Time
	lastSeen  atomic.Int64 // nanoseconds since start of the last received byte
	stopping  chan struct{}
	closeOnce sync.Once
	// tasks counts the goroutines shutdown joins: pool workers, dedicated operations, the liveness timer.
	// tasksClosed (under tasksMu) refuses new ones once shutdown waits.
	tasksMu     sync.Mutex
	tasksClosed bool
	tasks       sync.WaitGroup

	// helloJSON is hello's result, encoded on first use.
	helloOnce sync.Once
	helloJSON json.RawMessage
}

// Serve runs one connection over in and out until the input ends (nil), breaks (an error wrapping
// frame.ErrFraming), falls silent (ErrSilence), is stopped (ErrStopped), can no longer be written (an error
// wrapping the write error: the client closed the agent's output) or fails (any other error). Before returning it
// stops accepting replies, kills every command, closes every handle, flushes the output and joins its
// goroutines, for at most the exit grace. The reader, and goroutines stuck in a system call (a FIFO open), may
// outlive it; the caller is expected to exit the process.
func Serve(in io.Reader, out io.Writer, cfg Config) error {
	cfg = cfg.WithDefaults()
	if _, err := io.WriteString(out, "PI-ENV "+cfg.Token+"\n"); err != nil {
		return fmt.Errorf("write sync line: %w", err)
	}
	s := newServer(cfg, out)
	for range cfg.Workers {
		s.goTask(s.work)
	}
	readDone := make(chan error, 1)
	go func() { readDone <- s.readLoop(in) }()
	silent := make(chan struct{})
	s.goTask(func() { s.liveness(silent) })

	var err error
	select {
	case err = <-readDone:
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = nil
		}
	case <-silent:
		err = ErrSilence
	case <-cfg.Stop:
		err = ErrStopped
	case <-s.out.Done():
		// The writer only stops by itself when a write failed: nothing the agent does can reach the client.
		err = fmt.Errorf("output: %w", s.out.Wait())
	}
	s.shutdown()
	return err
}

func newServer(cfg Config, out io.Writer) *server {
	s := &server{
		cfg:       cfg,
		out:       output.New(out, cfg.Output),
		pool:      map[string]proto.Handler{},
		dedicated: map[string]proto.Handler{},
		controls:  map[uint32]*proto.Control{},
		jobs:      make(chan job, cfg.QueueDepth),
		budget:    payloadBudget{limit: int64(cfg.PayloadBudget), room: make(chan struct{})},
		start:     time.Now(),
		stopping:  make(chan struct{}),
	}
	if cfg.Files != nil {
		for op, h := range cfg.Files.Handlers() {
			s.pool[op] = h
		}
	}
	for op, h := range cfg.Handlers {
		s.pool[op] = h
	}
	if cfg.Commands != nil {
		s.dedicated["exec"] = cfg.Commands.Handle
	}
	for op, h := range cfg.Dedicated {
		s.dedicated[op] = h
	}
	s.features = features(cfg.Features, s.pool, s.dedicated)
	return s
}

// shutdown ends the connection once. The order matters:
//   - the writer stops accepting frames first (what is queued still goes out), so a command killed below can
//     never be reported as finished — its client sees the connection lost, not an exit code;
//   - every command dies, including one being spawned right now (the runner refuses and kills from here on);
//   - every running request is aborted, so operations that run until the client cancels them (a watch) end now
//     instead of holding shutdown for the whole exit grace;
//   - handles close, and the queued frames are flushed while the connection's goroutines end.
//
// A peer that stopped reading, or a handler stuck in a system call, must not keep the agent alive: both waits
// share one exit grace.
func (s *server) shutdown() {
	s.closeOnce.Do(func() {
		close(s.stopping)
		s.out.Close()
		if s.cfg.Commands != nil {
			s.cfg.Commands.KillAll()
		}
		s.abortAll()
		if s.cfg.Files != nil {
			s.cfg.Files.CloseAll()
		}
		s.tasksMu.Lock()
		s.tasksClosed = true
		s.tasksMu.Unlock()
		joined := make(chan struct{})
		go func() {
			s.tasks.Wait()
			close(joined)
		}()
		timer := time.NewTimer(s.cfg.ExitGrace)
		defer timer.Stop()
		for _, done := range []<-chan struct{}{s.out.Done(), joined} {
			select {
			case <-done:
			case <-timer.C:
				return
			}
		}
	})
}

// abortAll aborts the control of every request still registered.
func (s *server) abortAll() {
	s.controlsMu.Lock()
	defer s.controlsMu.Unlock()
	for _, ctl := range s.controls {
		ctl.Abort()
	}
}

// goTask runs fn on a goroutine that shutdown joins; once shutdown has begun waiting it runs nothing and
// reports false.
func (s *server) goTask(fn func()) bool {
	s.tasksMu.Lock()
	defer s.tasksMu.Unlock()
	if s.tasksClosed {
		return false
	}
	s.tasks.Add(1)
	go func() {
		defer s.tasks.Done()
		fn()
	}()
	return true
}

// countingReader records the time of every received byte, so a large frame arriving slowly keeps the
// connection alive.
type countingReader struct {
	in io.Reader
	s  *server
}

func (r countingReader) Read(p []byte) (int, error) {
	n, err := r.in.Read(p)
	if n > 0 {
		r.s.touch()
	}
	return n, err
}

func (s *server) touch() { s.lastSeen.Store(int64(time.Since(s.start))) }

// liveness pings every interval and closes silent when no byte arrived within the silence limit.
func (s *server) liveness(silent chan<- struct{}) {
	ticker := time.NewTicker(s.cfg.PingInterval)
	defer ticker.Stop()
	ping := frame.Frame{Type: frame.Ping, ID: 0, JSON: []byte("{}")}
	for {
		select {
		case <-s.stopping:
			return
		case <-ticker.C:
		}
		// A full control queue already carries traffic; skipping a ping there keeps this loop from blocking.
		_, _ = s.out.TrySend(ping)
		if s.blocked.Load() > 0 && (s.cfg.PeerGone == nil || !s.cfg.PeerGone()) {
			// The reader is not reading because the agent is behind, so no byte can arrive: that is not the
			// peer's silence — unless the peer has hung up, and then the silence limit ends the connection.
			s.touch()
		}
		quiet := time.Since(s.start) - time.Duration(s.lastSeen.Load())
		if quiet > s.cfg.SilenceLimit {
			close(silent)
			return
		}
	}
}

// isStopping reports whether the connection is shutting down.
func (s *server) isStopping() bool {
	select {
	case <-s.stopping:
		return true
	default:
		return false
	}
}
