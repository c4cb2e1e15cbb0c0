package watch

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

func TestMissingFileTargetCreationChangesReplacementRemoval(t *testing.T) {
	modes(t, func(t *testing.T, opts Options) {
		dir := tempDir(t)
		file := filepath.Join(dir, "AGENTS.md")
		_, rec := open(t, opts, dirTarget(file, false))
		steps := []func(){
			func() { write(t, file, "one") },
			func() { write(t, file, "two, longer") },
			func() {
				write(t, file+".tmp", "three")
				if err := os.Rename(file+".tmp", file); err != nil {
					t.Fatal(err)
				}
			},
			func() { write(t, file, "four, longer still") },
			func() {
				if err := os.Remove(file); err != nil {
					t.Fatal(err)
				}
			},
		}
		for _, step := range steps {
			rec.reset()
			step()
			rec.expectCovered(t, file)
		}
	})
}

func TestMissingTargetUnderMissingAncestors(t *testing.T) {
	modes(t, func(t *testing.T, opts Options) {
		dir := tempDir(t)
		file := joinAll(dir, "a", "b", "c", "AGENTS.md")
		_, rec := open(t, opts, dirTarget(file, false))
		write(t, file, "x")
		rec.expectCovered(t, file)
	})
}

func TestRecursiveTargetFollowsNewDirectoriesWithContents(t *testing.T) {
	modes(t, func(t *testing.T, opts Options) {
		dir := tempDir(t)
		skills := filepath.Join(dir, "skills")
		_, rec := open(t, opts, dirTarget(skills, true))
		write(t, joinAll(skills, "a", "b", "SKILL.md"), "x")
		rec.expectCovered(t, joinAll(skills, "a", "b", "SKILL.md"))
		rec.reset()
		deeper := joinAll(skills, "a", "b", "c", "d", "more.md")
		write(t, deeper, "y")
		rec.expectCovered(t, deeper)
		// The newest directory is watched too.
		rec.reset()
		write(t, deeper, "y, rewritten longer")
		rec.expectCovered(t, deeper)
	})
}

func TestParentRenamedAwayAndRecreated(t *testing.T) {
	modes(t, func(t *testing.T, opts Options) {
		dir := tempDir(t)
		pi := joinAll(dir, "proj", ".pi")
		write(t, joinAll(pi, "skills", "x.md"), "x")
		_, rec := open(t, opts, dirTarget(filepath.Join(pi, "skills"), true))
		if err := os.Rename(pi, joinAll(dir, "proj", "old")); err != nil {
			t.Fatal(err)
		}
		rec.expectCovered(t, filepath.Join(pi, "skills"))
		rec.reset()
		write(t, joinAll(pi, "skills", "y.md"), "y")
		rec.expectCovered(t, joinAll(pi, "skills", "y.md"))
	})
}

func TestExcludedEntriesAreNeverReportedButARenameOutOfThemIs(t *testing.T) {
	modes(t, func(t *testing.T, opts Options) {
		dir := tempDir(t)
		tree := filepath.Join(dir, "tree")
		write(t, joinAll(tree, "keep.txt"), "k")
		excluded := target{path: tree, recursive: true, hidden: true, names: map[string]bool{"node_modules": true}}
		_, rec := open(t, opts, excluded)
		write(t, joinAll(tree, ".git", "HEAD"), "h")
		write(t, joinAll(tree, "node_modules", "pkg", "index.js"), "i")
		write(t, joinAll(tree, "sub", "node_modules", "x.js"), "x")
		if err := os.Rename(joinAll(tree, ".git"), joinAll(tree, "visible")); err != nil {
			t.Fatal(err)
		}
		rec.expectCovered(t, joinAll(tree, "visible"))
		time.Sleep(200 * time.Millisecond) // let any late delivery about excluded entries arrive
		for _, bad := range []string{joinAll(tree, ".git"), joinAll(tree, "node_modules"), joinAll(tree, "sub", "node_modules")} {
			if p := hasPathUnder(rec.all(), bad); p != "" {
				t.Errorf("excluded %s reported", p)
			}
		}
	})
}

func TestOverlappingTargetsStillCoverSubdirectories(t *testing.T) {
	modes(t, func(t *testing.T, opts Options) {
		dir := tempDir(t)
		skills := filepath.Join(dir, "skills")
		write(t, joinAll(skills, "a", "one.md"), "1")
		_, rec := open(t, opts, dirTarget(skills, false), dirTarget(skills, true))
		write(t, joinAll(skills, "a", "two.md"), "2")
		rec.expectCovered(t, joinAll(skills, "a", "two.md"))
	})
}

func TestDirectoryReplacedAtTheSamePath(t *testing.T) {
	modes(t, func(t *testing.T, opts Options) {
		dir := tempDir(t)
		target := filepath.Join(dir, "d")
		write(t, joinAll(target, "a.txt"), "a")
		write(t, joinAll(dir, "next", "a.txt"), "a")
		_, rec := open(t, opts, dirTarget(target, false))
		// The replacement exists while the old directory does, so it cannot reuse its inode number.
		if err := os.RemoveAll(target); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, "next"), target); err != nil {
			t.Fatal(err)
		}
		rec.expectCovered(t, target)
		// The new directory has a watcher of its own.
		rec.reset()
		write(t, joinAll(target, "b.txt"), "b")
		rec.expectCovered(t, joinAll(target, "b.txt"))
	})
}

func TestDirectoryRemovedAndMadeAgainIsWatchedAgain(t *testing.T) {
	modes(t, func(t *testing.T, opts Options) {
		dir := tempDir(t)
		target := filepath.Join(dir, "d")
		write(t, joinAll(target, "a.txt"), "a")
		_, rec := open(t, opts, dirTarget(target, false))
		// The new directory may well get the old one's inode number.
		if err := os.RemoveAll(target); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(target, 0o755); err != nil {
			t.Fatal(err)
		}
		rec.expectCovered(t, joinAll(target, "a.txt"))
		time.Sleep(100 * time.Millisecond)
		rec.reset()
		write(t, joinAll(target, "b.txt"), "b")
		rec.expectCovered(t, joinAll(target, "b.txt"))
	})
}

func TestSymlinkedFileTargetReportsChangesOfTheLinkedFile(t *testing.T) {
	modes(t, func(t *testing.T, opts Options) {
		dir := tempDir(t)
		real := joinAll(dir, "elsewhere", "real.md")
		write(t, real, "one")
		link := filepath.Join(dir, "AGENTS.md")
		if err := os.Symlink(real, link); err != nil {
			t.Fatal(err)
		}
		_, rec := open(t, opts, dirTarget(link, false))
		write(t, real, "two, and longer")
		rec.expectCovered(t, link)
	})
}

func TestCloseStopsDeliveryAndIsIdempotent(t *testing.T) {
	modes(t, func(t *testing.T, opts Options) {
		dir := tempDir(t)
		w, rec := open(t, opts, dirTarget(dir, true))
		w.Close()
		w.Close()
		write(t, filepath.Join(dir, "after.txt"), "x")
		rec.quiet(t, 300*time.Millisecond, "after close")
	})
}

func TestDirectoryBudgetAtOpenAndLater(t *testing.T) {
	modes(t, func(t *testing.T, opts Options) {
		dir := tempDir(t)
		tree := filepath.Join(dir, "tree")
		for _, sub := range []string{joinAll(tree, "a", "b"), joinAll(tree, "c")} {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		opts.MaxDirectories = 3
		_, err := openWatcher([]target{dirTarget(tree, true)}, opts, func(Change) {}, nil)
		var failure *proto.Failure
		if !errors.As(err, &failure) || failure.Code != "EINVAL" || failure.Message != "Watched paths exceed 3 directories" {
			t.Fatalf("open over budget: %v", err)
		}
		if err := os.Remove(joinAll(tree, "c")); err != nil {
			t.Fatal(err)
		}
		w, rec := open(t, opts, dirTarget(tree, true))
		if err := os.Mkdir(joinAll(tree, "d"), 0o755); err != nil {
			t.Fatal(err)
		}
		rec.expect(t, "ending in the budget error", func(c []Change) bool {
			return len(c) > 0 && c[len(c)-1].Code == "invalid" && c[len(c)-1].Message == "Watched paths exceed 3 directories"
		})
		select {
		case <-w.Done():
		case <-time.After(wait):
			t.Fatal("the watcher did not stop after its error")
		}
		write(t, joinAll(tree, "later.txt"), "x")
		rec.quiet(t, 300*time.Millisecond, "after the error")
	})
}

func TestZeroBudgetRefusesEveryDirectoryTarget(t *testing.T) {
	dir := tempDir(t)
	_, err := openWatcher([]target{dirTarget(dir, false)}, Options{Mode: ModeNative, MaxDirectories: 0}, func(Change) {}, nil)
	if err == nil || err.Error() != "Watched paths exceed 0 directories" {
		t.Fatalf("open with budget 0: %v", err)
	}
	// A file target counts nothing.
	file := filepath.Join(dir, "f")
	write(t, file, "x")
	w, err := openWatcher([]target{dirTarget(file, false)}, Options{Mode: ModeNative, MaxDirectories: 0}, func(Change) {}, nil)
	if err != nil {
		t.Fatalf("file target with budget 0: %v", err)
	}
	w.Close()
}

func TestRunningOutOfNativeWatchesSwitchesToPollingWithAnOverflow(t *testing.T) {
	dir := tempDir(t)
	tree := filepath.Join(dir, "tree")
	write(t, joinAll(tree, "a", "x.txt"), "x")
	// The root's ancestors, the tree and a take more than 4 watches: the limit is hit during the open.
	opts := Options{Mode: ModeNative, PollInterval: 100 * time.Millisecond, MaxDirectories: 100, NativeLimit: 4}
	w, rec := open(t, opts, dirTarget(tree, true))
	if w.Mode() != ModePolling {
		t.Fatalf("mode %s after running out of watches, want polling", w.Mode())
	}
	if c := rec.all(); len(c) != 1 || !c[0].Overflow {
		t.Fatalf("deliveries %+v, want exactly one overflow", c)
	}
	if len(w.natives.watched) != 0 {
		t.Fatalf("native watchers left open: %v", w.natives.watched)
	}
	rec.reset()
	write(t, joinAll(tree, "a", "y.txt"), "y")
	rec.expectCovered(t, joinAll(tree, "a", "y.txt"))
	if c := rec.all(); c[0].Overflow {
		t.Fatalf("a second overflow: %+v", c)
	}
}

func TestRunningOutLaterSwitchesOnceTheTreeGrows(t *testing.T) {
	dir := tempDir(t)
	tree := filepath.Join(dir, "tree")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	base := len(ancestors(tree)) + 1
	opts := Options{Mode: ModeNative, PollInterval: 100 * time.Millisecond, MaxDirectories: 100, NativeLimit: base}
	w, rec := open(t, opts, dirTarget(tree, true))
	if w.Mode() != ModeNative || len(rec.all()) != 0 {
		t.Fatalf("mode %s, deliveries %+v before the tree grew", w.Mode(), rec.all())
	}
	write(t, joinAll(tree, "new", "file.txt"), "x")
	rec.expect(t, "overflow", func(c []Change) bool { return len(c) > 0 && c[0].Overflow })
	if w.Mode() != ModePolling {
		t.Fatalf("mode %s, want polling", w.Mode())
	}
}

func TestPollingSeesARewriteKeepingSizeAndMtime(t *testing.T) {
	dir := tempDir(t)
	file := filepath.Join(dir, "f.txt")
	write(t, file, "aaaa")
	stamp := time.Now().Add(-time.Second)
	if err := os.Chtimes(file, stamp, stamp); err != nil {
		t.Fatal(err)
	}
	_, rec := open(t, Options{Mode: ModePolling, PollInterval: 100 * time.Millisecond, MaxDirectories: 10}, dirTarget(file, false))
	write(t, file, "bbbb")
	if err := os.Chtimes(file, stamp, stamp); err != nil {
		t.Fatal(err)
	}
	rec.expectCovered(t, file)
}

func TestReadsAreNotEvents(t *testing.T) {
	dir := tempDir(t)
	file := filepath.Join(dir, "f.txt")
	write(t, file, "content")
	_, rec := open(t, Options{Mode: ModeNative, MaxDirectories: 10}, dirTarget(dir, true))
	for range 5 {
		if _, err := os.ReadFile(file); err != nil {
			t.Fatal(err)
		}
		if _, err := os.ReadDir(dir); err != nil {
			t.Fatal(err)
		}
	}
	rec.quiet(t, 300*time.Millisecond, "after reads")
}

func TestPermissionDeniedTargetFailsTheOpen(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory")
	}
	dir := tempDir(t)
	locked := filepath.Join(dir, "locked")
	if err := os.Mkdir(locked, 0o000); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(locked, 0o755)
	_, err := openWatcher([]target{dirTarget(locked, false)}, Options{Mode: ModeNative, MaxDirectories: 10}, func(Change) {}, nil)
	var failure *proto.Failure
	if !errors.As(err, &failure) || failure.Code != "EACCES" {
		t.Fatalf("open of an unreadable target: %v", err)
	}
}

// A native event about a name that is not UTF-8 reports the name as Node's fs.watch hands it over: decoded with
// one U+FFFD per maximal invalid subpart ("\xe2\x82", a cut-short sequence, is one U+FFFD), never raw bytes,
// which the wire would turn into one U+FFFD per byte.
func TestEventNamesThatAreNotUTF8AreDecodedAsNodeDecodesThem(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("file names that are not UTF-8 need a byte-oriented file system")
	}
	dir := tempDir(t)
	_, rec := open(t, Options{Mode: ModeNative, PollInterval: DefaultPollInterval, MaxDirectories: DefaultMaxDirectories},
		dirTarget(dir, false))
	write(t, joinAll(dir, "a\xe2\x82"), "x")
	want := joinAll(dir, "a\uFFFD")
	rec.expect(t, "reporting "+want, func(changes []Change) bool {
		for _, c := range changes {
			if slices.Contains(c.Paths, want) {
				return true
			}
		}
		return false
	})
	for _, c := range rec.all() {
		for _, p := range c.Paths {
			if !utf8.ValidString(p) {
				t.Errorf("a reported path is not UTF-8: %q", p)
			}
		}
	}
}
