package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/agent-go/internal/frame"
)

// These tests run the real agent binary over pipes, as a client does: what they check (memory, processes
// left behind, what a killed command is answered) only shows in a separate process.

var (
	agentOnce sync.Once
	agentDir  string
	agentPath string
	agentErr  error
)

// agentBinary builds the agent once per test binary; TestMain removes it. OUTPOST_TEST_AGENT names another
// binary to test instead (to measure an older build).
func agentBinary(t *testing.T) string {
	t.Helper()
	if other := os.Getenv("OUTPOST_TEST_AGENT"); other != "" {
		return other
	}
	agentOnce.Do(func() {
		agentDir, agentErr = os.MkdirTemp("", "outpost-agent-test-")
		if agentErr != nil {
			return
		}
		agentPath = filepath.Join(agentDir, "outpost")
		cmd := exec.Command("go", "build", "-trimpath", "-o", agentPath, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if output, err := cmd.CombinedOutput(); err != nil {
			agentErr = fmt.Errorf("go build: %w\n%s", err, output)
		}
	})
	if agentErr != nil {
		t.Fatal(agentErr)
	}
	return agentPath
}

func removeAgentBinary(int) {
	if agentDir != "" {
		_ = os.RemoveAll(agentDir)
	}
}

// agent is a running agent process and the client's ends of its stdio.
type agent struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    io.ReadCloser
	frames *frame.Reader
	exited chan struct{}
	// sent counts the bytes the agent's input accepted (the agent's reader took them, or the pipe buffers them).
	sent atomic.Int64
}

// startAgent starts the agent and reads its sync line.
func startAgent(t *testing.T) *agent {
	t.Helper()
	cmd := exec.Command(agentBinary(t), "serve", "--token", "ab")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a := &agent{t: t, cmd: cmd, in: in, out: out, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(a.exited)
	}()
	t.Cleanup(func() {
		// The agent ends as a client would end it; a kill only if it does not.
		_ = in.Close()
		_ = out.Close()
		select {
		case <-a.exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-a.exited
		}
	})
	br := bufio.NewReader(out)
	if line, err := br.ReadString('\n'); err != nil || line != "PI-ENV ab\n" {
		t.Fatalf("sync line %q: %v", line, err)
	}
	a.frames = frame.NewReader(br)
	return a
}

func (a *agent) pid() int { return a.cmd.Process.Pid }

// send writes one frame to the agent, in pieces so that the bytes accepted can be watched.
func (a *agent) send(f frame.Frame) error {
	raw, err := frame.Encode(f)
	if err != nil {
		return err
	}
	for len(raw) > 0 {
		n, err := a.in.Write(raw[:min(len(raw), 64<<10)])
		a.sent.Add(int64(n))
		if err != nil {
			return err
		}
		raw = raw[n:]
	}
	return nil
}

func (a *agent) request(id uint32, json string, payload []byte) {
	a.t.Helper()
	if err := a.send(frame.Frame{Type: frame.Request, ID: id, JSON: []byte(json), Payload: payload}); err != nil {
		a.t.Fatalf("send request %d: %v", id, err)
	}
}

// next returns the next frame that is not a ping.
func (a *agent) next() (frame.Frame, error) {
	for {
		f, err := a.frames.Next()
		if err != nil || f.Type != frame.Ping {
			return f, err
		}
	}
}

// replies waits for n final frames (results or errors) of any requests.
func (a *agent) replies(n int) {
	a.t.Helper()
	for n > 0 {
		f, err := a.next()
		if err != nil {
			a.t.Fatalf("waiting for %d more replies: %v", n, err)
		}
		if f.Type == frame.Result || f.Type == frame.Error {
			n--
		}
	}
}

// reply waits for the final frame of id, skipping every other frame.
func (a *agent) reply(id uint32) map[string]any {
	a.t.Helper()
	for {
		f, err := a.next()
		if err != nil {
			a.t.Fatalf("waiting for the reply to %d: %v", id, err)
		}
		if f.ID == id && (f.Type == frame.Result || f.Type == frame.Error) {
			var fields map[string]any
			if err := json.Unmarshal(f.JSON, &fields); err != nil {
				a.t.Fatal(err)
			}
			if f.Type == frame.Error {
				a.t.Fatalf("request %d failed: %v", id, fields)
			}
			return fields
		}
	}
}

// pingWhile sends a ping every second until the returned function is called, so an agent that takes long to
// answer does not end the connection for silence.
func (a *agent) pingWhile() (stop func()) {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Second):
			}
			if a.send(frame.Frame{Type: frame.Ping, JSON: []byte("{}")}) != nil {
				return
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// flood sends frames from a goroutine and returns once every byte was accepted, or once the agent stopped
// taking bytes for a second (its reader holds back: the budget is full). The goroutine may stay blocked
// until the agent is killed.
func (a *agent) flood(frames []frame.Frame) (accepted bool) {
	a.t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, f := range frames {
			if a.send(f) != nil {
				return
			}
		}
	}()
	last, lastChange := a.sent.Load(), time.Now()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
		select {
		case <-done:
			return true
		case <-time.After(50 * time.Millisecond):
		}
		if now := a.sent.Load(); now != last {
			last, lastChange = now, time.Now()
		} else if time.Since(lastChange) > time.Second {
			return false
		}
	}
	a.t.Fatal("the flood neither completed nor stalled within a minute")
	return false
}
