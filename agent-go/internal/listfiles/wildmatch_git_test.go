package listfiles

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWildmatchAgainstGit compares wildmatch with git's own, through `git check-ignore --no-index` on random
// patterns and paths: anchored patterns ("/<pattern>", matched in pathname mode against the whole path) and
// patterns without a slash (matched against the name alone). git also reports a path whose parent directory
// the pattern matches, so the expectation here is the same: the path or one of its parents matches.
func TestWildmatchAgainstGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	r := rand.New(rand.NewPCG(11, 12))
	pieces := []string{"a", "b", "1", "-", "*", "**", "?", "/", "[ab]", "[!a]", "[^b]", "[a-c]", "[]a]", "[[:alpha:]]",
		"[[:digit:]]", "[[:space:][:punct:]]", "[[:upper:]x]", "[z-a]", "[", "]", `\*`, `\a`, "A", ".", "[[:xdigit:]]",
		"[[:lower:]]", "[[:alnum:]]", "[[:blank:]]", "[[:cntrl:]]", "[[:graph:]]", "[[:print:]]", "[0-9]", "[a-z]",
		"[A-Z]", "[[:bogus:]]", "[a-]", "[\\]]", "0", "9", "z"}
	// No "." or ".." component and no leading ":": git takes its input paths as pathspecs and would rewrite them.
	textPieces := []string{"a", "b", "1", "-", "]", "[", "!", "A", "Z", ".a", "*", "x", "_", "ab", "aab", "a:b", "0", "9",
		"z", "@", "`", "{", "~", " ", "\t", "\x7f", "f", "g", "F", "G", "\\", "é"}
	var texts []string
	for range 120 {
		parts := make([]string, 1+r.IntN(3))
		for i := range parts {
			var part strings.Builder
			for range 1 + r.IntN(3) {
				part.WriteString(textPieces[r.IntN(len(textPieces))])
			}
			parts[i] = part.String()
		}
		texts = append(texts, strings.Join(parts, "/"))
	}
	repo := t.TempDir()
	if out, err := exec.Command(git, "-C", repo, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	for range 600 {
		var b strings.Builder
		for range 1 + r.IntN(5) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		pattern := b.String()
		anchored := strings.Contains(pattern, "/")
		if strings.HasSuffix(pattern, "/") || (!anchored && strings.ContainsAny(pattern[:1], "!#")) {
			continue // a directory-only pattern, a negation or a comment: not a plain match
		}
		line := pattern
		if anchored {
			line = "/" + pattern
		}
		if err := os.WriteFile(filepath.Join(repo, ".gitignore"), []byte(line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(git, "-C", repo, "check-ignore", "--no-index", "--stdin", "-z", "-v", "-n")
		cmd.Stdin = strings.NewReader(strings.Join(texts, "\x00") + "\x00")
		out, err := cmd.Output()
		if err != nil && cmd.ProcessState.ExitCode() != 1 {
			t.Fatalf("git check-ignore %q: %v", line, err)
		}
		fields := bytes.Split(out, []byte{0})
		for i := 0; i+3 < len(fields); i += 4 {
			text := string(fields[i+3])
			gitMatched := len(fields[i]) > 0
			if ours := matchesOrParent(pattern, text, anchored); ours != gitMatched {
				t.Errorf("pattern %q, path %q: ours %v, git %v", line, text, ours, gitMatched)
			}
		}
	}
}

// matchesOrParent is what `git check-ignore` reports for one pattern: whether the path or one of its parent
// directories matches (an anchored pattern against the path from the root, another against the last name).
func matchesOrParent(pattern, path string, anchored bool) bool {
	for {
		subject := path
		if !anchored {
			subject = path[strings.LastIndexByte(path, '/')+1:]
		}
		if wildmatch(pattern, subject, anchored) {
			return true
		}
		cut := strings.LastIndexByte(path, '/')
		if cut < 0 {
			return false
		}
		path = path[:cut]
	}
}
