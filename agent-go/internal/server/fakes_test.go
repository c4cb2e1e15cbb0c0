package server

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/agent-go/internal/frame"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
	"github.com/outpost-dev/outpost/agent-go/internal/sysinfo"
)

// fakeFiles stands in for internal/fsops: a few pool ops with observable behaviour, and a chunk writer that
// records arrival order.
type fakeFiles struct {
	closeAll atomic.Int32
	release  chan struct{} // "block" waits on it

	mu     sync.Mutex
	chunks []string
}

func newFakeFiles() *fakeFiles { return &fakeFiles{release: make(chan struct{})} }

func (f *fakeFiles) Handlers() map[string]proto.Handler {
	return map[string]proto.Handler{
		// echo answers with the request's own JSON.
		"echo": func(call *proto.Call) (proto.Reply, error) {
			var fields map[string]any
			if failure := call.Decode(&fields); failure != nil {
				return proto.Reply{}, failure
			}
			return proto.Reply{JSON: fields, Payload: call.Payload}, nil
		},
		// block holds its worker until the test releases it.
		"block": func(call *proto.Call) (proto.Reply, error) {
			<-f.release
			return proto.Reply{}, nil
		},
		// aborted reports whether a cancel reached the request before it ran.
		"aborted": func(call *proto.Call) (proto.Reply, error) {
			return proto.Reply{JSON: map[string]any{"aborted": call.Control.Aborted()}}, nil
		},
		"fail": func(call *proto.Call) (proto.Reply, error) {
			return proto.Reply{}, &proto.Failure{Code: "ENOENT", Message: "ENOENT: no such file or directory, lstat '/x'",
				Syscall: "lstat", Path: "/x"}
		},
		"plainError": func(call *proto.Call) (proto.Reply, error) {
			return proto.Reply{}, errors.New("something broke")
		},
		"panic": func(call *proto.Call) (proto.Reply, error) {
			var m map[string]int
			m["boom"] = 1
			return proto.Reply{}, nil
		},
		"big": func(call *proto.Call) (proto.Reply, error) {
			return proto.Reply{JSON: map[string]any{}, Payload: []byte(strings.Repeat("b", ControlPayload+1))}, nil
		},
		"huge": func(call *proto.Call) (proto.Reply, error) {
			return proto.Reply{Payload: make([]byte, frame.MaxFrame)}, nil
		},
	}
}

func (f *fakeFiles) WriteChunk(call *proto.Call, done func(proto.Reply, error)) {
	f.mu.Lock()
	f.chunks = append(f.chunks, string(call.Payload))
	f.mu.Unlock()
	// Finish in the background like the real chunk writer does.
	go done(proto.Reply{}, nil)
}

func (f *fakeFiles) CloseAll() { f.closeAll.Add(1) }

func (f *fakeFiles) chunkOrder() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.chunks...)
}

// fakeCommands stands in for internal/execop. An exec request's JSON says what to do:
// {"events": n} emits n bulk output events and exits 0; {"wait": true} waits for a cancel or KillAll and reports
// which flag it saw.
type fakeCommands struct {
	killAll atomic.Int32
	killed  chan struct{}
	once    sync.Once
}

func newFakeCommands() *fakeCommands { return &fakeCommands{killed: make(chan struct{})} }

func (c *fakeCommands) Handle(call *proto.Call) (proto.Reply, error) {
	var req struct {
		Events int  `json:"events"`
		Wait   bool `json:"wait"`
	}
	if failure := call.Decode(&req); failure != nil {
		return proto.Reply{}, failure
	}
	for i := range req.Events {
		event := map[string]any{"kind": "output", "stream": "stdout"}
		if err := call.Events.Emit(proto.BulkQueue, event, []byte{byte('0' + i%10)}); err != nil {
			return proto.Reply{}, err
		}
	}
	if req.Wait {
		for !call.Control.Aborted() && !call.Control.Killed() {
			select {
			case <-call.Control.Changed():
			case <-c.killed:
				return proto.Reply{}, &proto.Failure{Code: "aborted", Message: "killed at shutdown"}
			case <-time.After(5 * time.Second):
				return proto.Reply{}, &proto.Failure{Code: "timeout", Message: "no cancel arrived"}
			}
		}
		if call.Control.Aborted() {
			return proto.Reply{}, &proto.Failure{Code: "aborted", Message: "aborted",
				Extra: map[string]any{"spillPath": "/tmp/x.log"}}
		}
		return proto.Reply{JSON: map[string]any{"exitCode": 137}, Bulk: true}, nil
	}
	return proto.Reply{JSON: map[string]any{"exitCode": 0}, Bulk: true}, nil
}

func (c *fakeCommands) KillAll() {
	c.killAll.Add(1)
	c.once.Do(func() { close(c.killed) })
}

// testInfo is a fixed machine description so hello's fields can be checked exactly.
var testInfo = sysinfo.Info{OS: "linux", Arch: "x86_64", Home: "/home/u", Separator: "/", TempDir: "/tmp",
	Cwd: "/work", DriveCwds: map[string]string{}}

// client drives a server over in-memory pipes.
type client struct {
	t        *testing.T
	in       *io.PipeWriter
	inMu     sync.Mutex
	frames   chan frame.Frame
	served   chan error
	result   error
	gotDone  bool
	files    *fakeFiles
	commands *fakeCommands
	syncLine string
}

// startServer runs Serve with fakes over pipes and reads the sync line. Zero timings in cfg become generous
// test values (so nothing times out by accident).
func startServer(t *testing.T, cfg Config) *client {
	t.Helper()
	c := &client{t: t, frames: make(chan frame.Frame, 4096), served: make(chan error, 1),
		files: newFakeFiles(), commands: newFakeCommands()}
	cfg.Token = "0123abcd"
	if cfg.Files == nil {
		cfg.Files = c.files
	}
	if cfg.Commands == nil {
		cfg.Commands = c.commands
	}
	if cfg.Info == nil {
		info := testInfo
		cfg.Info = &info
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.PingInterval == 0 {
		cfg.PingInterval = time.Hour
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c.in = inW
	go func() {
		err := Serve(inR, outW, cfg)
		_ = outW.Close()
		c.served <- err
	}()
	br := bufio.NewReader(outR)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatalf("sync line: %v", err)
	}
	c.syncLine = line
	go func() {
		defer close(c.frames)
		r := frame.NewReader(br)
		for {
			f, err := r.Next()
			if err != nil {
				_, _ = io.Copy(io.Discard, outR)
				return
			}
			c.frames <- f
		}
	}()
	t.Cleanup(func() {
		select {
		case <-c.files.release:
		default:
			close(c.files.release)
		}
		_ = c.in.Close()
		c.wait()
		for range c.frames {
		}
		_ = inR.Close()
	})
	return c
}

func (c *client) send(typ frame.Type, id uint32, json string, payload []byte) {
	c.t.Helper()
	c.sendRaw(mustEncode(c.t, frame.Frame{Type: typ, ID: id, JSON: []byte(json), Payload: payload}))
}

func (c *client) sendRaw(b []byte) {
	c.t.Helper()
	c.inMu.Lock()
	defer c.inMu.Unlock()
	if _, err := c.in.Write(b); err != nil {
		c.t.Fatalf("write to the server: %v", err)
	}
}

func mustEncode(t testing.TB, f frame.Frame) []byte {
	t.Helper()
	b, err := frame.Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// next returns the next frame that is not a ping.
func (c *client) next() frame.Frame {
	c.t.Helper()
	for {
		select {
		case f, ok := <-c.frames:
			if !ok {
				c.t.Fatal("the server's output ended")
			}
			if f.Type == frame.Ping {
				continue
			}
			return f
		case <-time.After(10 * time.Second):
			c.t.Fatal("no frame from the server")
		}
	}
}

// reply returns the final frame for id, skipping events and pings, and its decoded JSON.
func (c *client) reply(id uint32) (frame.Frame, map[string]any) {
	c.t.Helper()
	for {
		f := c.next()
		if f.Type == frame.Event || f.ID != id {
			c.t.Fatalf("unexpected frame type %d id %d (%s) while waiting for the reply to %d", f.Type, f.ID, f.JSON, id)
		}
		return f, decode(c.t, f.JSON)
	}
}

func decode(t testing.TB, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("server JSON %q: %v", raw, err)
	}
	return m
}

// wait returns Serve's result once it has returned.
func (c *client) wait() error {
	c.t.Helper()
	if c.gotDone {
		return c.result
	}
	select {
	case c.result = <-c.served:
		c.gotDone = true
		return c.result
	case <-time.After(10 * time.Second):
		c.t.Fatal("Serve did not return")
		return nil
	}
}

// closeAndWait closes the input and returns Serve's result.
func (c *client) closeAndWait() error {
	c.t.Helper()
	_ = c.in.Close()
	return c.wait()
}
