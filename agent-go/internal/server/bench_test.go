//go:build unix

package server

import (
	"bufio"
	"os"
	"testing"

	"github.com/outpost-dev/outpost/agent-go/internal/frame"
	"github.com/outpost-dev/outpost/agent-go/internal/fsops"
)

// benchmarkRoundTrip measures one request at a time through Serve over OS pipes (as the agent runs), with the
// real file operations: the agent-side cost of a round trip, for profiling the request path.
func benchmarkRoundTrip(b *testing.B, json string) {
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- Serve(inR, outW, Config{Token: "t", Files: fsops.New()}) }()
	out := bufio.NewReader(outR)
	if _, err := out.ReadString('\n'); err != nil {
		b.Fatal(err)
	}
	frames := frame.NewReader(out)
	raw, err := frame.Encode(frame.Frame{Type: frame.Request, ID: 1, JSON: []byte(json)})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := inW.Write(raw); err != nil {
			b.Fatal(err)
		}
		for {
			f, err := frames.Next()
			if err != nil {
				b.Fatal(err)
			}
			if f.Type == frame.Result {
				break
			}
			if f.Type == frame.Error {
				b.Fatalf("error reply %s", f.JSON)
			}
		}
	}
	b.StopTimer()
	_ = inW.Close()
	if err := <-served; err != nil {
		b.Fatal(err)
	}
	_ = outR.Close()
	_ = outW.Close()
	_ = inR.Close()
}

func BenchmarkHelloRoundTrip(b *testing.B) { benchmarkRoundTrip(b, `{"op":"hello","protocol":1}`) }

func BenchmarkLstatRoundTrip(b *testing.B) { benchmarkRoundTrip(b, `{"op":"lstat","path":"/tmp"}`) }
