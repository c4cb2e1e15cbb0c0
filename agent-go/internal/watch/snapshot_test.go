package watch

import (
	"slices"
	"testing"
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
}
