package main

import (
	"bufio"
	"encoding/json"
	"io"
	"slices"
	"testing"

	"github.com/outpost-dev/outpost/agent-go/internal/frame"
)

// The agent serves protocol 1's watch (ready event, result {} after a cancel) and announces nothing new for it in
// hello: watch is part of protocol 1.
func TestAgentServesWatchWithoutAnnouncingIt(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		status := run([]string{"serve", "--token", "ab"}, inR, outW, io.Discard)
		outW.Close()
		done <- status
	}()
	br := bufio.NewReader(outR)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	frames := frame.NewReader(br)
	next := func() (frame.Frame, map[string]any) {
		for {
			f, err := frames.Next()
			if err != nil {
				t.Fatal(err)
			}
			if f.Type == frame.Ping {
				continue
			}
			var fields map[string]any
			if err := json.Unmarshal(f.JSON, &fields); err != nil {
				t.Fatal(err)
			}
			return f, fields
		}
	}
	send := func(typ frame.Type, id uint32, fields map[string]any) {
		raw, _ := json.Marshal(fields)
		if err := frame.Write(inW, frame.Frame{Type: typ, ID: id, JSON: raw}); err != nil {
			t.Fatal(err)
		}
	}

	send(frame.Request, 1, map[string]any{"op": "hello", "protocol": 1})
	_, hello := next()
	features, _ := hello["features"].([]any)
	if slices.Contains(features, any("watch")) {
		t.Errorf("hello announces watch: %v", features)
	}
	send(frame.Request, 2, map[string]any{"op": "watch", "targets": []any{map[string]any{"path": t.TempDir()}}})
	if f, ev := next(); f.ID != 2 || f.Type != frame.Event || ev["kind"] != "ready" {
		t.Fatalf("watch answered %v %v, want the ready event", f.Type, ev)
	}
	send(frame.Cancel, 2, map[string]any{})
	if f, ev := next(); f.ID != 2 || f.Type != frame.Result || len(ev) != 0 {
		t.Fatalf("after cancel %v %v, want the result {}", f.Type, ev)
	}
	go io.Copy(io.Discard, br) // whatever else comes (a ping) must not hold the agent's writer
	inW.Close()
	if status := <-done; status != 0 {
		t.Fatalf("status %d", status)
	}
}
