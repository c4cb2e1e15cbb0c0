package listfiles

import (
	"strings"
	"testing"
	"time"
)

// FuzzIgnoreFile feeds arbitrary ignore-file contents and paths to the parser and the matcher: they must never
// panic, the literal fast path must agree with wildmatch, and matching must stay fast (no exponential search).
func FuzzIgnoreFile(f *testing.F) {
	f.Add("*.o\n!keep.o\nbuild/\n/a/**/b\n[[:alpha:]]?\\#x\n", "a/x/b", "b")
	f.Add("*a*a*a*a*a*a*a*a*a*a*b\n**/*a*a*a*a*a*a*a*a*b", strings.Repeat("a", 300), "x")
	f.Add("[\n[!\n[:x:]\n\\", "[", "[")
	f.Fuzz(func(t *testing.T, content, rel, name string) {
		start := time.Now()
		list := parsePatterns([]byte(content))
		for _, isDir := range []bool{false, true} {
			list.decide(rel, name, isDir)
		}
		for _, p := range list {
			if p.literal {
				text := strings.TrimPrefix(p.text, "/")
				if wildmatch(text, rel, true) != (text == rel) {
					t.Fatalf("literal %q vs %q: fast path and wildmatch disagree", text, rel)
				}
			}
		}
		if elapsed := time.Since(start); elapsed > 2*time.Second {
			t.Fatalf("matching took %v", elapsed)
		}
	})
}
