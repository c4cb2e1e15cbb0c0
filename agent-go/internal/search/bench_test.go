package search

import (
	"os"
	"testing"
)

// BenchmarkSearch searches SEARCH_BENCH_TREE (a directory) for SEARCH_BENCH_PATTERN (default a literal); the
// numbers next to ripgrep's come from tools/bench-search-files.ts (make bench).
func BenchmarkSearch(b *testing.B) {
	root := os.Getenv("SEARCH_BENCH_TREE")
	if root == "" {
		b.Skip("set SEARCH_BENCH_TREE to a directory to search")
	}
	pattern := os.Getenv("SEARCH_BENCH_PATTERN")
	if pattern == "" {
		pattern = "RARE_NEEDLE_XYZ"
	}
	args := map[string]any{"path": root, "pattern": pattern, "ignoreCase": os.Getenv("SEARCH_BENCH_I") != ""}
	for b.Loop() {
		matches, _, err := searchReq(&testing.T{}, args, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(matches)), "matches")
	}
}
