package watch

import (
	"slices"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

func TestReportedMapsAncestorsToTheFirstTargetBelow(t *testing.T) {
	targets := []target{dirTarget("/p/a/x", false), dirTarget("/p/a/y", false), dirTarget("/q", true)}
	cases := map[string]string{
		"/p/a/x":     "/p/a/x",
		"/p/a/x/f":   "/p/a/x/f",
		"/q/deep/er": "/q/deep/er",
		"/p/a":       "/p/a/x", // an ancestor that changed identity moved the targets below it
		"/p":         "/p/a/x",
		"/":          "/p/a/x",
		"/other":     "/other",
		"/p/a/xx":    "/p/a/xx",
	}
	for path, want := range cases {
		if got := reported(path, targets); got != want {
			t.Errorf("reported(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestAncestorsNearestFirstUpToTheRoot(t *testing.T) {
	if got := ancestors("/a/b/c"); !slices.Equal(got, []string{"/a/b", "/a", "/"}) {
		t.Errorf("ancestors(/a/b/c) = %q", got)
	}
	if got := ancestors("/"); !slices.Equal(got, []string{"/"}) {
		t.Errorf("ancestors(/) = %q", got)
	}
}

func TestCoversChecksRecursionAndExcludesBelowTheTarget(t *testing.T) {
	flat := target{path: "/t", names: map[string]bool{"node_modules": true}, hidden: true}
	deep := flat
	deep.recursive = true
	for _, tc := range []struct {
		t    target
		path string
		want bool
	}{
		{flat, "/t", true},
		{flat, "/", true},
		{flat, "/t/a", true},
		{flat, "/t/a/b", false},
		{deep, "/t/a/b", true},
		{deep, "/t/.git/x", false},
		{deep, "/t/a/node_modules/x", false},
		{flat, "/t/.hidden", false},
		{flat, "/tt", false},
		{flat, "/u", false},
		{target{path: "/.x", hidden: true}, "/.x", true}, // excludes never apply to the target itself
	} {
		if got := tc.t.covers(tc.path); got != tc.want {
			t.Errorf("%+v covers %q = %v, want %v", tc.t, tc.path, got, tc.want)
		}
	}
}

func TestPathsSortLikeJavaScript(t *testing.T) {
	// UTF-16 order puts a surrogate pair (U+1F600) before U+FF5E; byte order would not.
	got := sortedPaths(map[string]bool{"/～": true, "/😀": true, "/b": true, "/a": true, "/a/b": true})
	if want := []string{"/a", "/a/b", "/b", "/😀", "/～"}; !slices.Equal(got, want) {
		t.Errorf("sorted %q, want %q", got, want)
	}
}

func TestRequestOptionsFollowNode(t *testing.T) {
	if d := nodeTimerDelay(0); d.Milliseconds() != 1 {
		t.Errorf("pollIntervalMs 0 → %v, want 1 ms", d)
	}
	if d := nodeTimerDelay(3e9); d.Milliseconds() != 1 {
		t.Errorf("pollIntervalMs 3e9 → %v, want 1 ms", d)
	}
	if d := nodeTimerDelay(100); d.Milliseconds() != 100 {
		t.Errorf("pollIntervalMs 100 → %v", d)
	}
	if budget(0) != 0 || budget(-5) != -1 || budget(3.5) != 3 {
		t.Errorf("budget: %d %d %d", budget(0), budget(-5), budget(3.5))
	}
	// The ends of Node's timer range (1 and 2^31-1 ms are kept, just outside is 1 ms).
	for ms, want := range map[float64]time.Duration{1: time.Millisecond, 0.999: time.Millisecond,
		maxTimerMs: maxTimerMs * time.Millisecond, maxTimerMs + 1: time.Millisecond, 1.5: 1500 * time.Microsecond} {
		if d := nodeTimerDelay(ms); d != want {
			t.Errorf("pollIntervalMs %v → %v, want %v", ms, d, want)
		}
	}
}

// parseRequest reads targets and options as protocol 1 sends them (killed mutants: a nativeWatchLimit of 1
// ignored; a body-less request not refused as "watch needs targets").
func TestParseRequest(t *testing.T) {
	parse := func(args string) ([]target, Options, *proto.Failure) {
		return parseRequest(&proto.Call{Op: "watch", Args: []byte(args)})
	}
	targets, opts, f := parse(`{"targets":[{"path":"/a","recursive":true,"exclude":{"hidden":true,"names":["x",1]}},` +
		`{"path":"/b"}],"nativeWatchLimit":1,"pollIntervalMs":250,"mode":"polling"}`)
	if f != nil || len(targets) != 2 || opts.NativeLimit != 1 || opts.PollInterval != 250*time.Millisecond ||
		opts.Mode != "polling" {
		t.Fatalf("parsed %+v %+v %v", targets, opts, f)
	}
	if a, b := targets[0], targets[1]; a.path != "/a" || !a.recursive || !a.hidden || !a.names["x"] || len(a.names) != 1 ||
		b.path != "/b" || b.recursive || b.hidden {
		t.Fatalf("targets %+v", targets)
	}
	if _, opts, _ := parse(`{"targets":[],"nativeWatchLimit":0.5}`); opts.NativeLimit != 0 {
		t.Errorf("nativeWatchLimit 0.5 → %d, want the default", opts.NativeLimit)
	}
	for _, args := range []string{``, `{}`, `{"targets":[{}]}`, `{"targets":[{"path":1}]}`, `{"targets":"x"}`, `[`} {
		if _, _, f := parse(args); f == nil || f.Message != "watch needs targets" {
			t.Errorf("%q: %v, want watch needs targets", args, f)
		}
	}
}
