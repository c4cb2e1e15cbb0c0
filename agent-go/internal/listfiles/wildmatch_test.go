package listfiles

import "testing"

// Cases in the spirit of git's t3070-wildmatch (pathname mode unless noted), written from git's documented rules.
func TestWildmatch(t *testing.T) {
	cases := []struct {
		pattern, text string
		pathname      bool
		want          bool
	}{
		{"foo", "foo", true, true},
		{"foo", "bar", true, false},
		{"???", "foo", true, true},
		{"??", "foo", true, false},
		{"*", "foo", true, true},
		{"f*", "foo", true, true},
		{"*f", "foo", true, false},
		{"*foo*", "foo", true, true},
		{"*ob*a*r*", "foobar", true, true},
		{"*ab", "aaaaaaabababab", true, true},
		{`foo\*`, "foo*", true, true},
		{`foo\*bar`, "foobar", true, false},
		{`f\\oo`, `f\oo`, true, true},
		{"*[al]?", "ball", true, true},
		{"[ten]", "ten", true, false},
		{"**[!te]", "ten", true, true},
		{"**[!ten]", "ten", true, false},
		{"t[a-g]n", "ten", true, true},
		{"t[!a-g]n", "ten", true, false},
		{"t[^a-g]n", "ton", true, true},
		{"a[]]b", "a]b", true, true},
		{"a[]-]b", "a-b", true, true},
		{"a[]a-]b", "aab", true, true},
		{"]", "]", true, true},
		{"foo*bar", "foo/baz/bar", true, false},
		{"foo*bar", "foo/baz/bar", false, true},
		{"foo**bar", "foo/baz/bar", true, false},
		{"foo/**/bar", "foo/baz/bar", true, true},
		{"foo/**/bar", "foo/b/a/z/bar", true, true},
		{"foo/**/bar", "foo/bar", true, true},
		{"**/foo", "foo", true, true},
		{"**/foo", "x/y/foo", true, true},
		{"foo/**", "foo/a/b", true, true},
		{"foo/**", "foo", true, false},
		{"*/foo", "x/y/foo", true, false},
		{"*/foo", "x/foo", true, true},
		{"foo?bar", "foo/bar", true, false},
		{"foo[/]bar", "foo/bar", true, false},
		{"[[:alpha:]][[:digit:]][[:upper:]]", "a1B", true, true},
		{"[[:digit:][:upper:][:space:]]", "a", true, false},
		{"[[:digit:][:upper:][:space:]]", " ", true, true},
		{"[a-c[:digit:]x-z]", "5", true, true},
		{"[[:nope:]]", "a", true, false},
		{"[[:alpha:]", "a", true, false},
		{"[\\-^]", "^", true, true},
		{"a[", "a[", true, false},
		{"\\", "\\", true, false},
		{"-*-*-*-*-*-*-12-*-*-*-m-*-*-*", "-adobe-courier-bold-o-normal--12-120-75-75-m-70-iso8859-1", true, true},
		{"XXX/*/*/*/*/*/*/12/*/*/*/m/*/*/*", "XXX/adobe/courier/bold/o/normal//12/120/75/75/m/70/iso8859/1", true, true},
		{"**/*a*b*g*n*t", "abcd/abcdefg/abcdefghijk/abcdefghijklmnop.txt", true, true},
		{"**/*a*b*g*n*t", "abcd/abcdefg/abcdefghijk/abcdefghijklmnop.txtz", true, false},
	}
	for _, c := range cases {
		if got := wildmatch(c.pattern, c.text, c.pathname); got != c.want {
			t.Errorf("wildmatch(%q, %q, pathname=%v) = %v, want %v", c.pattern, c.text, c.pathname, got, c.want)
		}
	}
}

func TestParsePatterns(t *testing.T) {
	list := parsePatterns([]byte("\uFEFF# comment\n\n*.o\r\n!keep.o\nbuild/\n/anchored\na/b\nspace\\ \ntrail   \n\\#hash\n\\!bang"))
	want := []pattern{
		{text: "*.o", basename: true},
		{text: "keep.o", negated: true, basename: true, literal: true},
		{text: "build", dirOnly: true, basename: true, literal: true},
		{text: "/anchored", literal: true},
		{text: "a/b", literal: true},
		{text: "space\\ ", basename: true},
		{text: "trail", basename: true, literal: true},
		{text: "\\#hash", basename: true},
		{text: "\\!bang", basename: true},
	}
	if len(list) != len(want) {
		t.Fatalf("got %d patterns %+v, want %d", len(list), list, len(want))
	}
	for i := range want {
		if list[i] != want[i] {
			t.Errorf("pattern %d = %+v, want %+v", i, list[i], want[i])
		}
	}
}

// trimTrailingSpaces is git's trim_trailing_spaces (dir.c): trailing spaces go, tabs stay, a space escaped by a
// backslash stays and so does everything before it, a line ending in a lone backslash is kept whole (killed
// mutants: a line of spaces kept as one space, or escapes ending the scan early).
func TestTrimTrailingSpaces(t *testing.T) {
	for line, want := range map[string]string{
		"":         "",
		" ":        "",
		"   ":      "",
		"a  ":      "a",
		"a b  ":    "a b",
		"a\t":      "a\t",
		`a\ `:      `a\ `,
		`a\  `:     `a\ `,
		`a\ b  `:   `a\ b`,
		`a\`:       `a\`,
		`a  \`:     `a  \`,
		` \  `:     ` \ `,
		"x \\\\  ": "x \\\\",
	} {
		if got := trimTrailingSpaces(line); got != want {
			t.Errorf("trimTrailingSpaces(%q) = %q; want %q", line, got, want)
		}
	}
}
