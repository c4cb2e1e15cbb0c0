package search

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/agent-go/internal/listfiles"
)

// The differential property of spec/semantics.md §23: on generated trees (odd and non-UTF-8 names, ignore files
// at random depths, binary files, CRLF and non-UTF-8 lines, long lines) and generated patterns of the supported
// subset, searchFiles finds exactly the (path, line, text, submatches) that ripgrep 13 finds. The budget is a
// number of trees (SEARCH_RG_TREES, default 40, 12 under -race) with 8 patterns each; the seed is printed and can be set with
// SEARCH_RG_SEED.
func TestAgreesWithRipgrep(t *testing.T) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Fatal("this test needs ripgrep (`rg`, Debian package ripgrep): ", err)
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SEARCH_RG_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	trees := 40
	if raceEnabled {
		trees = 12
	}
	if s := os.Getenv("SEARCH_RG_TREES"); s != "" {
		trees, _ = strconv.Atoi(s)
	}
	t.Logf("seed %d (SEARCH_RG_SEED=%d reproduces), %d trees", seed, seed, trees)
	rnd := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	home := t.TempDir()
	compared, nonEmpty := 0, 0
	for range trees {
		root := t.TempDir()
		genTree(t, rnd, root)
		for range 8 {
			pattern, flags := genPattern(rnd)
			want := ripgrep(t, rg, home, root, pattern, flags)
			got := ours(t, root, pattern, flags)
			compared++
			if len(want) > 0 {
				nonEmpty++
			}
			if !slices.Equal(got, want) {
				if keep := os.Getenv("SEARCH_RG_KEEP"); keep != "" {
					_ = exec.Command("cp", "-a", root, keep).Run()
				}
				t.Fatalf("seed %d: pattern %q %v in\n%s\nonly ours:\n%s\nonly ripgrep:\n%s", seed, pattern, flags,
					listTree(root), difference(got, want), difference(want, got))
			}
		}
	}
	t.Logf("%d searches compared, %d with matches", compared, nonEmpty)
}

// flags are a generated search's options, as ripgrep's flags.
type flags struct {
	literal, ignoreCase, smartCase, word bool
}

func (f flags) String() string {
	return fmt.Sprintf("literal=%v ignoreCase=%v smartCase=%v word=%v", f.literal, f.ignoreCase, f.smartCase, f.word)
}

var (
	nameParts = []string{"a", "b", "src", "é", "x y", "日本", "-dash", "#h", "UP", ".hid", "a.txt", "b.log", "n\xffz"}
	words     = []string{"foo", "Foo", "FOO", "bar", "baz", "a.b", "x+y", "(q)", "[z]", "日本", "é", "ß", "straße",
		"_id", "foo_bar", "$x", "^", "a|b", "\\", "k", "K", "0x1F", "  ", "\t", "-", ""}
)

// wordy are words of word characters only.
var wordy = []string{"foo", "Foo", "bar", "_id", "foo_bar", "straße", "日本", "é", "k", "K", "0x1F"}

// genTree writes a random tree below root.
func genTree(t *testing.T, rnd *rand.Rand, root string) {
	t.Helper()
	dirs := []string{""}
	for range rnd.IntN(5) {
		parent := dirs[rnd.IntN(len(dirs))]
		dirs = append(dirs, parent+nameParts[rnd.IntN(len(nameParts))]+"/")
	}
	for range 1 + rnd.IntN(12) {
		dir := dirs[rnd.IntN(len(dirs))]
		name := nameParts[rnd.IntN(len(nameParts))] + strconv.Itoa(rnd.IntN(3))
		write(t, filepath.Join(root, dir, name), genContent(rnd))
	}
	for range rnd.IntN(3) {
		dir := dirs[rnd.IntN(len(dirs))]
		var rules []string
		for range 1 + rnd.IntN(3) {
			rule := []string{"*.log", "a*", "!a.txt", "src/", "*1", "x y*", "UP*", "/b0"}[rnd.IntN(8)]
			rules = append(rules, rule)
		}
		name := []string{".gitignore", ".ignore"}[rnd.IntN(2)]
		write(t, filepath.Join(root, dir, name), []byte(strings.Join(rules, "\n")+"\n"))
	}
}

func write(t *testing.T, path string, content []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
}

// genContent is a file's bytes: lines of words, with a UTF-8 BOM, CRLF, non-UTF-8 bytes, long lines and NUL bytes sometimes.
func genContent(rnd *rand.Rand) []byte {
	var b bytes.Buffer
	if rnd.IntN(10) == 0 {
		b.WriteString("\xEF\xBB\xBF")
	}
	for range rnd.IntN(30) {
		for range rnd.IntN(6) {
			b.WriteString(words[rnd.IntN(len(words))])
			b.WriteString([]string{" ", "", ".", ",", "_"}[rnd.IntN(5)])
		}
		switch rnd.IntN(20) {
		case 0:
			// Not FF FE or FE FF: at the start of a file, ripgrep reads those as a UTF-16 byte order mark.
			b.WriteString("\xc3(\xff")
		case 1:
			b.WriteString(strings.Repeat("long foo ", 500+rnd.IntN(500)))
		case 2:
			b.WriteByte('\r')
		}
		b.WriteByte('\n')
	}
	if rnd.IntN(15) == 0 {
		b.WriteByte(0)
	}
	if rnd.IntN(4) == 0 {
		b.WriteString("last foo")
	}
	return b.Bytes()
}

// genPattern draws a pattern of the supported subset (no \w \d \s \b, no `.`: those differ on non-ASCII text).
func genPattern(rnd *rand.Rand) (string, flags) {
	f := flags{ignoreCase: rnd.IntN(4) == 0, smartCase: rnd.IntN(4) == 0, word: rnd.IntN(5) == 0}
	if rnd.IntN(3) == 0 {
		f.literal = true
		return words[rnd.IntN(len(words)-1)], f
	}
	var atom func(depth int) string
	atom = func(depth int) string {
		switch n := rnd.IntN(8); {
		case n < 3 || depth > 2:
			w := words[rnd.IntN(len(words)-1)]
			return regexpQuote(w)
		case n == 3:
			return []string{"[a-f]", "[^a-z ]", "[[:digit:]]", "[0-9x]", "[é日]", "\\pL", "[[:punct:]]"}[rnd.IntN(7)]
		case n == 4:
			return "(" + atom(depth+1) + "|" + atom(depth+1) + ")"
		case n == 5:
			// Grouped: RE2 refuses a repetition of a repetition (`a?*`), which ripgrep accepts. A loop over what
			// can match the empty string differs between RE2 and ripgrep's engine (SF4), so it is made optional.
			inner := atom(depth + 1)
			if regexp.MustCompile(inner).MatchString("") {
				return "(?:" + inner + ")?"
			}
			return "(?:" + inner + ")" + []string{"*", "+", "?", "{1,2}", "+?"}[rnd.IntN(5)]
		default:
			return atom(depth+1) + atom(depth+1)
		}
	}
	pattern := atom(0)
	// Anchors at the pattern's ends only: ripgrep 13 does not match `$^` on an empty line, RE2 does.
	switch rnd.IntN(6) {
	case 0:
		pattern = "^" + pattern
	case 1:
		pattern += "$"
	}
	if f.word {
		// ripgrep 13's -w has quirks (SF4) with patterns that can match the empty string, start with `^` or
		// with a non-word character, or have variable length: -w patterns are alternations of words.
		pattern = wordy[rnd.IntN(len(wordy))]
		for range rnd.IntN(3) {
			pattern += "|" + wordy[rnd.IntN(len(wordy))]
		}
	}
	return pattern, f
}

func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ripgrep runs rg in root and returns its matches as "path:line:text:spans" lines, sorted as we order them.
func ripgrep(t *testing.T, rg, home, root, pattern string, f flags) []string {
	t.Helper()
	args := []string{"--json", "--hidden", "--no-require-git", "--no-config", "--no-messages"}
	if f.literal {
		args = append(args, "-F")
	}
	if f.ignoreCase {
		args = append(args, "-i")
	} else if f.smartCase {
		args = append(args, "-S")
	}
	if f.word {
		args = append(args, "-w")
	}
	args = append(args, "-e", pattern)
	cmd := exec.Command(rg, args...)
	cmd.Dir = root
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8"}
	out, err := cmd.Output()
	if err != nil && cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("rg %q: %v %s", args, err, out)
	}
	type data struct {
		Text  *string `json:"text"`
		Bytes *string `json:"bytes"`
	}
	var found []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var msg struct {
			Type string `json:"type"`
			Data struct {
				Path       data `json:"path"`
				Lines      data `json:"lines"`
				LineNumber int  `json:"line_number"`
				Submatches []struct {
					Start, End int
				} `json:"submatches"`
			} `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil {
			t.Fatal(err)
		}
		if msg.Type != "match" {
			continue
		}
		path := raw(t, msg.Data.Path)
		if content, err := os.ReadFile(filepath.Join(root, path)); err != nil || bytes.IndexByte(content, 0) >= 0 {
			// ripgrep may print a binary file's first match before it notices the NUL (SF8); ours prints none,
			// which the comparison still checks.
			continue
		}
		line := raw(t, msg.Data.Lines)
		line = strings.TrimSuffix(line, "\n")
		var spans []string
		for _, s := range msg.Data.Submatches {
			if s.Start < s.End {
				spans = append(spans, fmt.Sprintf("%d-%d", s.Start, s.End))
			}
		}
		found = append(found, path+"\x00"+fmt.Sprintf("%s\x00%d:%s:%v", listfiles.DecodeName(path),
			msg.Data.LineNumber, listfiles.DecodeName(line), spans))
	}
	// In our order: by raw path bytes (ripgrep prints in its walk's order), lines in order within a file.
	slices.SortStableFunc(found, func(a, b string) int {
		return strings.Compare(a[:strings.IndexByte(a, 0)], b[:strings.IndexByte(b, 0)])
	})
	for i, entry := range found {
		found[i] = entry[strings.IndexByte(entry, 0)+1:]
	}
	return found
}

// raw is a ripgrep JSON string: text, or base64 bytes.
func raw(t *testing.T, d struct {
	Text  *string `json:"text"`
	Bytes *string `json:"bytes"`
},
) string {
	if d.Text != nil {
		return *d.Text
	}
	b, err := base64.StdEncoding.DecodeString(*d.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ours runs searchFiles with the equivalent options, in the same form.
func ours(t *testing.T, root, pattern string, f flags) []string {
	t.Helper()
	matches, _ := ok(t, map[string]any{"path": root, "pattern": pattern, "literal": f.literal,
		"ignoreCase": f.ignoreCase, "smartCase": f.smartCase, "wordRegexp": f.word})
	var found []string
	for _, m := range matches {
		// Empty submatches are left out on both sides: ripgrep reports them inside multi-byte characters too.
		var spans []string
		for _, s := range m.Submatches {
			if s.Start < s.End {
				spans = append(spans, fmt.Sprintf("%d-%d", s.Start, s.End))
			}
		}
		found = append(found, fmt.Sprintf("%s\x00%d:%s:%v", m.Path, m.Line, m.Text, spans))
	}
	return found
}

func listTree(root string) string {
	var b strings.Builder
	filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			content, _ := os.ReadFile(path)
			if len(content) > 300 {
				content = append(content[:300:300], "…"...)
			}
			fmt.Fprintf(&b, "%s: %q\n", strings.TrimPrefix(path, root+"/"), content)
		}
		return nil
	})
	return b.String()
}

// difference lists the entries of a not in b, shortened.
func difference(a, b []string) string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			if len(x) > 200 {
				x = x[:200] + "…"
			}
			out = append(out, strings.Replace(x, "\x00", " ", 1))
		}
	}
	return strings.Join(out, "\n")
}
