package nodefmt

import "testing"

// Expected values printed by Node 20: node -e 'console.log(require("util").inspect(s))'.
func TestInspectString(t *testing.T) {
	cases := []struct{ in, want string }{
		{"a\x00b", `'a\x00b'`},
		{"it's", `"it's"`},
		{`say "hi" it's`, "`say \"hi\" it's`"},
		{"a`b\"c'd", `'a` + "`" + `b"c\'d'`},
		{"\t\n\r\b\f\x0b\x1b\x7f\\", `'\t\n\r\b\f\x0B\x1B\x7F\\'`},
		{"é😀", `'é😀'`},
		{"a\x00\x1b'", `"a\x00\x1B'"`},
		{"", `''`},
	}
	for _, c := range cases {
		if got := InspectString(c.in); got != c.want {
			t.Errorf("InspectString(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}
