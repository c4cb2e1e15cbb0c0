package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/outpost-dev/outpost/agent-go/internal/execop"
	"github.com/outpost-dev/outpost/agent-go/internal/fsops"
	"github.com/outpost-dev/outpost/agent-go/internal/version"
	"github.com/outpost-dev/outpost/agent-go/internal/watch"
)

func TestMain(m *testing.M) {
	// sigreset starts a goroutine at init that drains the signals the agent keeps ignoring; it lives for the
	// whole process by design.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/outpost-dev/outpost/agent-go/internal/sigreset.init.0.func1"),
		goleak.Cleanup(removeAgentBinary))
}

func TestCommandLine(t *testing.T) {
	cases := []struct {
		name       string
		args       []string
		stdin      string
		wantStatus int
		wantOut    string
		wantErr    string
	}{
		{"version", []string{"--version"}, "", 0, "outpost " + version.Version + "\n", ""},
		{"no arguments", nil, "", 2, "", usage + "\n"},
		{"serve without token", []string{"serve"}, "", 2, "", usage + "\n"},
		{"empty token", []string{"serve", "--token", ""}, "", 2, "", usage + "\n"},
		{"token not hex", []string{"serve", "--token", "xyz"}, "", 2, "", usage + "\n"},
		{"extra argument", []string{"serve", "--token", "ab", "more"}, "", 2, "", usage + "\n"},
		{"unknown command", []string{"help"}, "", 2, "", usage + "\n"},
		{"version with more", []string{"--version", "x"}, "", 2, "", usage + "\n"},
		{"serve until EOF", []string{"serve", "--token", "00ffAB"}, "", 0, "PI-ENV 00ffAB\n", ""},
		{"serve ends at a framing error", []string{"serve", "--token", "ab"}, "\x00\x00\x00\x01", 0, "PI-ENV ab\n",
			"outpost: framing error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			status := run(tc.args, strings.NewReader(tc.stdin), &stdout, &stderr)
			if status != tc.wantStatus || stdout.String() != tc.wantOut || !strings.HasPrefix(stderr.String(), tc.wantErr) {
				t.Fatalf("status %d, stdout %q, stderr %q; want %d, %q, prefix %q", status, stdout.String(),
					stderr.String(), tc.wantStatus, tc.wantOut, tc.wantErr)
			}
		})
	}
}

// failingWriter makes the sync line fail: an I/O failure of serve exits 1.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestServeIOFailure(t *testing.T) {
	var stderr bytes.Buffer
	status := run([]string{"serve", "--token", "ab"}, strings.NewReader(""), failingWriter{}, &stderr)
	if status != 1 || !strings.HasPrefix(stderr.String(), "outpost: ") || !strings.Contains(stderr.String(), "broken pipe") {
		t.Fatalf("status %d, stderr %q", status, stderr.String())
	}
}

// The agent serves with the protocol's timings and the documented pool and queue sizes: the configuration
// serve builds, as the server completes it, has exactly these values (written out, not taken from the
// constants, so a change to a default shows up here).
func TestServeUsesDefaultTimingsAndSizes(t *testing.T) {
	stop := make(chan struct{})
	cfg := serverConfig("ab", stop, watch.New()).WithDefaults()
	checks := []struct {
		name      string
		got, want any
	}{
		{"ping interval", cfg.PingInterval, 5 * time.Second},
		{"silence limit", cfg.SilenceLimit, 30 * time.Second},
		{"pool workers", cfg.Workers, 16},
		{"pool queue depth", cfg.QueueDepth, 64},
		{"request payload budget", cfg.PayloadBudget, 64 << 20},
		{"dedicated operations", cfg.MaxDedicated, 4096},
		{"exit grace", cfg.ExitGrace, 2 * time.Second},
		{"bulk output limit", cfg.Output.BulkLimit, 4 << 20},
		{"control queue limit", cfg.Output.ControlLimit, 1024},
		{"output recheck", cfg.Output.Recheck, 100 * time.Millisecond},
		{"output batch size", cfg.Output.BufferSize, 256 << 10},
		{"token", cfg.Token, "ab"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if _, ok := cfg.Files.(*fsops.Ops); !ok {
		t.Errorf("file operations are %T, want *fsops.Ops", cfg.Files)
	}
	if _, ok := cfg.Commands.(*execop.Runner); !ok {
		t.Errorf("commands are %T, want *execop.Runner", cfg.Commands)
	}
	if cfg.Info == nil || cfg.Info.TempDir == "" || cfg.Stop != (<-chan struct{})(stop) {
		t.Errorf("machine info %+v or stop channel not passed through", cfg.Info)
	}
}
