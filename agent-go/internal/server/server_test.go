package server

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/outpost-dev/outpost/agent-go/internal/frame"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
	"github.com/outpost-dev/outpost/agent-go/internal/version"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSyncLineComesFirst(t *testing.T) {
	c := startServer(t, Config{})
	if c.syncLine != "PI-ENV 0123abcd\n" {
		t.Fatalf("sync line %q", c.syncLine)
	}
}

func TestHello(t *testing.T) {
	c := startServer(t, Config{
		Handlers: map[string]proto.Handler{"listFiles": func(*proto.Call) (proto.Reply, error) { return proto.Reply{}, nil }},
		Features: []string{"zz.extra"},
	})
	c.send(frame.Request, 1, `{"protocol":99,"op":"hello"}`, nil)
	f, got := c.reply(1)
	if f.Type != frame.Result {
		t.Fatalf("hello failed: %s", f.JSON)
	}
	want := map[string]any{
		"protocol": float64(1), "version": version.Version, "os": "linux", "arch": "x86_64", "home": "/home/u",
		"separator": "/", "tmpdir": "/tmp", "cwd": "/work", "pid": float64(os.Getpid()),
	}
	for key, value := range want {
		if got[key] != value {
			t.Errorf("hello.%s = %#v, want %#v", key, got[key], value)
		}
	}
	if drives, ok := got["driveCwds"].(map[string]any); !ok || len(drives) != 0 {
		t.Errorf("driveCwds = %#v, want {}", got["driveCwds"])
	}
	var features []string
	for _, v := range got["features"].([]any) {
		features = append(features, v.(string))
	}
	// Served ops beyond protocol 1 are announced; protocol 1 ops (echo is not one, exec is) are judged by name.
	wantFeatures := []string{"aborted", "big", "block", "echo", "exec.envUnset", "exec.window", "fail", "huge", "listFiles", "panic",
		"plainError", "zz.extra"}
	if !slices.Equal(features, wantFeatures) {
		t.Errorf("features %v, want %v", features, wantFeatures)
	}
	if len(got) != len(want)+2 {
		t.Errorf("hello has extra fields: %v", got)
	}
}

func TestRequestErrors(t *testing.T) {
	cases := []struct {
		name    string
		json    string
		message string
	}{
		{"unknown op", `{"op":"nope"}`, "unknown operation nope"},
		{"missing op", `{"path":"/"}`, "unknown operation undefined"},
		{"numeric op", `{"op":42}`, "unknown operation 42"},
		{"null op", `{"op":null}`, "unknown operation null"},
		{"unparsable JSON", `{"op":"echo"`, "invalid JSON"},
		{"JSON null", `null`, "invalid JSON"},
		{"JSON array", `[1,2]`, "invalid JSON"},
		{"JSON string", `"echo"`, "invalid JSON"},
		{"trailing garbage", `{"op":"echo"} x`, "invalid JSON"},
		{"writeChunk is known only with file ops", `{"op":"writeChunkX"}`, "unknown operation writeChunkX"},
	}
	c := startServer(t, Config{})
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := uint32(100 + i)
			c.send(frame.Request, id, tc.json, nil)
			// The next request still works: a bad request fails alone.
			c.send(frame.Request, id+1000, `{"op":"echo","n":1}`, nil)
			f, got := c.reply(id)
			if f.Type != frame.Error || got["code"] != "EINVAL" || got["message"] != tc.message {
				t.Fatalf("reply type %d %v, want EINVAL %q", f.Type, got, tc.message)
			}
			if f, got := c.reply(id + 1000); f.Type != frame.Result || got["n"] != float64(1) {
				t.Fatalf("the request after it: type %d %v", f.Type, got)
			}
		})
	}
}

func TestRepliesAndErrors(t *testing.T) {
	cases := []struct {
		name     string
		json     string
		payload  []byte
		wantType frame.Type
		check    func(t *testing.T, got map[string]any, payload []byte)
	}{
		{"result with payload", `{"op":"echo","x":"y"}`, []byte("data"), frame.Result,
			func(t *testing.T, got map[string]any, payload []byte) {
				if got["x"] != "y" || string(payload) != "data" {
					t.Fatalf("%v %q", got, payload)
				}
			}},
		{"jsonLength 0 is an empty object", ``, nil, frame.Error,
			func(t *testing.T, got map[string]any, payload []byte) {
				if got["code"] != "EINVAL" || got["message"] != "unknown operation undefined" {
					t.Fatalf("%v", got)
				}
			}},
		{"failure fields", `{"op":"fail"}`, nil, frame.Error,
			func(t *testing.T, got map[string]any, payload []byte) {
				if got["code"] != "ENOENT" || got["syscall"] != "lstat" || got["path"] != "/x" ||
					!strings.HasPrefix(got["message"].(string), "ENOENT: ") {
					t.Fatalf("%v", got)
				}
			}},
		{"plain error is unknown", `{"op":"plainError"}`, nil, frame.Error,
			func(t *testing.T, got map[string]any, payload []byte) {
				if got["code"] != "unknown" || got["message"] != "something broke" {
					t.Fatalf("%v", got)
				}
			}},
		{"panic is unknown", `{"op":"panic"}`, nil, frame.Error,
			func(t *testing.T, got map[string]any, payload []byte) {
				if got["code"] != "unknown" || !strings.Contains(got["message"].(string), "panic") {
					t.Fatalf("%v", got)
				}
			}},
		{"large payload", `{"op":"big"}`, nil, frame.Result,
			func(t *testing.T, got map[string]any, payload []byte) {
				if len(payload) != ControlPayload+1 {
					t.Fatalf("payload of %d bytes", len(payload))
				}
			}},
		{"reply over the frame limit", `{"op":"huge"}`, nil, frame.Error,
			func(t *testing.T, got map[string]any, payload []byte) {
				if got["code"] != "unknown" {
					t.Fatalf("%v", got)
				}
			}},
	}
	c := startServer(t, Config{})
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := uint32(i + 1)
			c.send(frame.Request, id, tc.json, tc.payload)
			f, got := c.reply(id)
			if f.Type != tc.wantType {
				t.Fatalf("type %d (%s), want %d", f.Type, f.JSON, tc.wantType)
			}
			tc.check(t, got, f.Payload)
		})
	}
	// The connection survived all of it, including the panic.
	c.send(frame.Request, 99, `{"op":"echo"}`, nil)
	if f, _ := c.reply(99); f.Type != frame.Result {
		t.Fatalf("after the errors: %s", f.JSON)
	}
}

// A cancel right behind its request reaches the request's control, whichever way the request is routed.
func TestCancelRightBehindRequest(t *testing.T) {
	t.Run("pool request queued behind a busy worker", func(t *testing.T) {
		c := startServer(t, Config{Workers: 1})
		c.send(frame.Request, 1, `{"op":"block"}`, nil)
		var batch []byte
		batch = append(batch, mustEncode(t, frame.Frame{Type: frame.Request, ID: 2, JSON: []byte(`{"op":"aborted"}`)})...)
		batch = append(batch, mustEncode(t, frame.Frame{Type: frame.Cancel, ID: 2, JSON: []byte(`{}`)})...)
		batch = append(batch, mustEncode(t, frame.Frame{Type: frame.Request, ID: 3, JSON: []byte(`{"op":"aborted"}`)})...)
		c.sendRaw(batch)
		// The cancel is read before the worker is free; a marker request proves the reader got past it.
		c.send(frame.Request, 4, `{"op":"hello"}`, nil)
		if f, _ := c.reply(4); f.Type != frame.Result {
			t.Fatal("hello failed")
		}
		close(c.files.release)
		if f, _ := c.reply(1); f.Type != frame.Result {
			t.Fatal("block failed")
		}
		if _, got := c.reply(2); got["aborted"] != true {
			t.Fatalf("request 2 did not see its cancel: %v", got)
		}
		if _, got := c.reply(3); got["aborted"] != false {
			t.Fatalf("request 3 saw a cancel meant for 2: %v", got)
		}
	})
	cases := []struct {
		cancel   string
		wantType frame.Type
		wantKey  string
		want     any
	}{
		{`{}`, frame.Error, "code", "aborted"},
		{`{"mode":"kill"}`, frame.Result, "exitCode", float64(137)},
		{`{"mode":"other"}`, frame.Error, "code", "aborted"},
		{`not json`, frame.Error, "code", "aborted"},
	}
	for _, tc := range cases {
		t.Run("exec with cancel "+tc.cancel, func(t *testing.T) {
			c := startServer(t, Config{})
			var batch []byte
			batch = append(batch, mustEncode(t, frame.Frame{Type: frame.Request, ID: 7, JSON: []byte(`{"op":"exec","wait":true}`)})...)
			batch = append(batch, mustEncode(t, frame.Frame{Type: frame.Cancel, ID: 7, JSON: []byte(tc.cancel)})...)
			c.sendRaw(batch)
			f, got := c.reply(7)
			if f.Type != tc.wantType || got[tc.wantKey] != tc.want {
				t.Fatalf("type %d %v, want %d with %s=%v", f.Type, got, tc.wantType, tc.wantKey, tc.want)
			}
		})
	}
}

func TestIgnoredFrames(t *testing.T) {
	c := startServer(t, Config{})
	c.send(frame.Cancel, 12345, `{}`, nil)          // unknown id
	c.send(frame.Ping, 0, `{}`, nil)                // pings are only liveness
	c.send(frame.Result, 1, `{"op":"echo"}`, nil)   // a client never sends results
	c.send(frame.Type(77), 1, `{"op":"echo"}`, nil) // nor unknown types
	c.send(frame.Request, 2, `{"op":"echo","ok":true}`, nil)
	if f, got := c.reply(2); f.Type != frame.Result || got["ok"] != true {
		t.Fatalf("reply %d %v", f.Type, got)
	}
}

func TestExecEventsPrecedeResult(t *testing.T) {
	c := startServer(t, Config{})
	c.send(frame.Request, 3, `{"op":"exec","events":50}`, nil)
	// Events still waiting to be written may be joined into one frame; their text keeps its order.
	var want, text []byte
	for i := range 50 {
		want = append(want, byte('0'+i%10))
	}
	for len(text) < len(want) {
		f := c.next()
		if f.Type != frame.Event || f.ID != 3 || len(f.Payload) == 0 {
			t.Fatalf("after %q: type %d id %d payload %q", text, f.Type, f.ID, f.Payload)
		}
		if got := decode(t, f.JSON); got["kind"] != "output" || got["stream"] != "stdout" {
			t.Fatalf("event JSON %v", got)
		}
		text = append(text, f.Payload...)
	}
	if !bytes.Equal(text, want) {
		t.Fatalf("event text %q, want %q", text, want)
	}
	if f, got := c.reply(3); f.Type != frame.Result || got["exitCode"] != float64(0) {
		t.Fatalf("result %d %v", f.Type, got)
	}
}

func TestWriteChunkKeepsArrivalOrder(t *testing.T) {
	c := startServer(t, Config{})
	var batch []byte
	var want []string
	for i := range 200 {
		chunk := fmt.Sprintf("chunk-%03d", i)
		want = append(want, chunk)
		batch = append(batch, mustEncode(t, frame.Frame{Type: frame.Request, ID: uint32(1000 + i),
			JSON: []byte(`{"op":"writeChunk","handle":1}`), Payload: []byte(chunk)})...)
	}
	c.sendRaw(batch)
	seen := map[uint32]bool{}
	for range 200 {
		f := c.next()
		if f.Type != frame.Result || seen[f.ID] {
			t.Fatalf("chunk reply type %d id %d", f.Type, f.ID)
		}
		seen[f.ID] = true
	}
	if got := c.files.chunkOrder(); !slices.Equal(got, want) {
		t.Fatalf("chunks reached the file ops out of order")
	}
}

func TestPings(t *testing.T) {
	c := startServer(t, Config{PingInterval: 10 * time.Millisecond})
	for range 3 {
		select {
		case f := <-c.frames:
			if f.Type != frame.Ping || f.ID != 0 || string(f.JSON) != "{}" || len(f.Payload) != 0 {
				t.Fatalf("frame type %d id %d %s, want a ping", f.Type, f.ID, f.JSON)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no ping")
		}
		// Keep the connection from going silent.
		c.send(frame.Ping, 0, `{}`, nil)
	}
}

func TestShutdown(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		// act ends the connection and returns what Serve should report.
		act     func(c *client) error
		wantErr error
	}{
		{"input EOF", Config{}, func(c *client) error { return c.closeAndWait() }, nil},
		{"input ends inside a frame", Config{}, func(c *client) error {
			c.sendRaw([]byte{0, 0, 0, 20, 1})
			return c.closeAndWait()
		}, nil},
		{"framing error", Config{}, func(c *client) error {
			c.sendRaw(binary.BigEndian.AppendUint32(nil, frame.MaxFrame+1))
			return c.wait()
		}, frame.ErrFraming},
		{"silence", Config{PingInterval: 10 * time.Millisecond, SilenceLimit: 300 * time.Millisecond},
			func(c *client) error { return c.wait() }, ErrSilence},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := startServer(t, tc.cfg)
			// A running command proves KillAll reached it.
			c.send(frame.Request, 1, `{"op":"exec","wait":true}`, nil)
			c.send(frame.Request, 2, `{"op":"hello"}`, nil)
			if f, _ := c.reply(2); f.Type != frame.Result {
				t.Fatal("hello failed")
			}
			err := tc.act(c)
			if tc.wantErr == nil && err != nil || !errors.Is(err, tc.wantErr) {
				t.Fatalf("Serve returned %v, want %v", err, tc.wantErr)
			}
			if c.commands.killAll.Load() != 1 || c.files.closeAll.Load() != 1 {
				t.Fatalf("KillAll called %d times, CloseAll %d times; want 1 each", c.commands.killAll.Load(),
					c.files.closeAll.Load())
			}
			// The output was closed and the writer joined: the client's stream ends.
			deadline := time.After(5 * time.Second)
			for {
				select {
				case _, ok := <-c.frames:
					if !ok {
						return
					}
				case <-deadline:
					t.Fatal("the output did not end")
				}
			}
		})
	}
}

// Bytes that trickle in keep the connection alive even when no frame completes within the silence limit.
func TestSlowFrameCountsAsLife(t *testing.T) {
	const limit = 300 * time.Millisecond
	c := startServer(t, Config{PingInterval: 10 * time.Millisecond, SilenceLimit: limit})
	raw := mustEncode(t, frame.Frame{Type: frame.Request, ID: 5, JSON: []byte(`{"op":"echo","slow":1}`)})
	start := time.Now()
	for _, b := range raw {
		c.sendRaw([]byte{b})
		time.Sleep(limit / 15)
	}
	if elapsed := time.Since(start); elapsed < 2*limit {
		t.Fatalf("the frame took only %v; the test needs it slower than the silence limit", elapsed)
	}
	if f, got := c.reply(5); f.Type != frame.Result || got["slow"] != float64(1) {
		t.Fatalf("reply %d %v", f.Type, got)
	}
}

func TestStop(t *testing.T) {
	stop := make(chan struct{})
	c := startServer(t, Config{Stop: stop})
	close(stop)
	if err := c.wait(); !errors.Is(err, ErrStopped) {
		t.Fatalf("Serve returned %v", err)
	}
	if c.commands.killAll.Load() != 1 || c.files.closeAll.Load() != 1 {
		t.Fatal("stop did not kill and close")
	}
}

func TestTooManyDedicated(t *testing.T) {
	c := startServer(t, Config{MaxDedicated: 1})
	c.send(frame.Request, 1, `{"op":"exec","wait":true}`, nil)
	c.send(frame.Request, 2, `{"op":"exec"}`, nil)
	if f, got := c.reply(2); f.Type != frame.Error || got["code"] != "spawn_error" {
		t.Fatalf("second exec: %d %v", f.Type, got)
	}
	c.send(frame.Cancel, 1, `{}`, nil)
	if f, got := c.reply(1); f.Type != frame.Error || got["code"] != "aborted" || got["spillPath"] != "/tmp/x.log" {
		t.Fatalf("first exec: %d %v", f.Type, got)
	}
}

func TestNoFileOps(t *testing.T) {
	// Without collaborators every op but hello is unknown, and shutdown still works.
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	info := testInfo
	go func() {
		served <- Serve(inR, outW, Config{Token: "ff", Info: &info, PingInterval: time.Hour, Log: io.Discard})
		_ = outW.Close()
	}()
	go func() {
		_, _ = inW.Write(mustEncode(t, frame.Frame{Type: frame.Request, ID: 1, JSON: []byte(`{"op":"exec"}`)}))
		_, _ = inW.Write(mustEncode(t, frame.Frame{Type: frame.Request, ID: 2, JSON: []byte(`{"op":"writeChunk"}`)}))
		_ = inW.Close()
	}()
	out, err := io.ReadAll(outR)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	rest, ok := bytes.CutPrefix(out, []byte("PI-ENV ff\n"))
	if !ok {
		t.Fatalf("output %q", out)
	}
	r := frame.NewReader(bytes.NewReader(rest))
	for id := uint32(1); id <= 2; id++ {
		f, err := r.Next()
		if err != nil || f.Type != frame.Error || f.ID != id || !strings.Contains(string(f.JSON), "unknown operation") {
			t.Fatalf("frame %d: %v %s", id, err, f.JSON)
		}
	}
	_ = inR.Close()
}

func TestFeatures(t *testing.T) {
	noop := func(*proto.Call) (proto.Reply, error) { return proto.Reply{}, nil }
	cases := []struct {
		name  string
		extra []string
		ops   []map[string]proto.Handler
		want  []string
	}{
		{"nothing beyond protocol 1", nil, []map[string]proto.Handler{{"lstat": noop, "close": noop}}, []string{}},
		{"exec brings its additions", nil, []map[string]proto.Handler{{"exec": noop}}, []string{"exec.envUnset", "exec.window"}},
		{"new ops and extras, sorted, once", []string{"b.extra", "listFiles"},
			[]map[string]proto.Handler{{"listFiles": noop, "watch": noop}, {"a.op": noop}},
			[]string{"a.op", "b.extra", "listFiles"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := features(tc.extra, tc.ops...); !slices.Equal(got, tc.want) || got == nil {
				t.Fatalf("features = %#v, want %#v", got, tc.want)
			}
		})
	}
}
