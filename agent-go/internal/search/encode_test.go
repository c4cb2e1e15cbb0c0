package search

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The hand-written encoding decodes to the same match for every kind of text: quotes, control characters, CR,
// non-ASCII, U+2028/9, U+FFFD.
func TestAppendMatchRoundTrips(t *testing.T) {
	texts := []string{"", "plain", `q"uo\te`, "tab\there\r", "\x00\x01\x1f\x7f", "é日本😀", "\u2028\u2029", "\uFFFD x",
		"<html>&amp;"}
	for _, text := range texts {
		m := Match{Path: "dir/" + text, Line: 7, Text: text, Submatches: []Span{{0, 1}, {2, 3}}, Before: []string{text},
			After: []string{}}
		var back Match
		if err := json.Unmarshal(appendMatch(nil, &m), &back); err != nil {
			t.Fatalf("%q: %v in %s", text, err, appendMatch(nil, &m))
		}
		if !reflect.DeepEqual(back, m) {
			t.Errorf("%q: got %#v", text, back)
		}
	}
}
