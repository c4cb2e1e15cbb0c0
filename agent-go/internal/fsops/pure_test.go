package fsops

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"testing"
)

func TestBaseAndDirName(t *testing.T) {
	// Expected values are Node's path.posix / path.win32 basename and dirname.
	cases := []struct {
		path          string
		windows       bool
		base, dirname string
	}{
		{"/a/b", false, "b", "/a"},
		{"/a", false, "a", "/"},
		{"/", false, "", "/"},
		{"/a/b/", false, "b", "/a"},
		{"//a", false, "a", "//"},
		{"a", false, "a", "."},
		{"a/b", false, "b", "a"},
		{`C:\a\b`, true, "b", `C:\a`},
		{`C:\a`, true, "a", `C:\`},
		{`C:\`, true, "", `C:\`},
		{`C:/x/y`, true, "y", `C:/x`},
		{`\\server\share\a`, true, "a", `\\server\share\`}, // More of Node's answers: repeated separators, the ends of the drive-letter ranges, bare volumes.
		{"//", false, "", "/"},
		{"///a//", false, "a", "//"},
		{"/a//b//", false, "b", "/a/"},
		{"a//", false, "a", "."},
		{"", false, "", "."},
		{"..", false, "..", "."},
		{"a/b/c", false, "c", "a/b"},
		{"a:\\x", true, "x", "a:\\"},
		{"z:\\x", true, "x", "z:\\"},
		{"A:\\x", true, "x", "A:\\"},
		{"Z:\\x", true, "x", "Z:\\"},
		{"@:\\x", true, "x", "@:"},
		{"[:\\x", true, "x", "[:"},
		{"`:\\x", true, "x", "`:"},
		{"{:\\x", true, "x", "{:"},
		{"C:", true, "", "C:"},
		{"C:x", true, "x", "C:"},
		{"C:x\\y", true, "y", "C:x"},
		{"\\\\server\\share", true, "share", "\\\\server\\share"},
		{"\\\\server\\share\\", true, "share", "\\\\server\\share\\"},
		{"\\\\server", true, "server", "\\"},
		{"\\\\", true, "", "\\"},
		{"C:\\\\", true, "", "C:\\"},
		{"C:\\a\\\\", true, "a", "C:\\"},
		{"\\a", true, "a", "\\"},
		{"\\", true, "", "\\"},
		{"x:", true, "", "x:"},
	}
	for _, c := range cases {
		if got := baseName(c.path, c.windows); got != c.base {
			t.Errorf("baseName(%q) = %q; want %q", c.path, got, c.base)
		}
		if got := dirName(c.path, c.windows); got != c.dirname {
			t.Errorf("dirName(%q) = %q; want %q", c.path, got, c.dirname)
		}
	}
	if got := joinEntry("/", "x", false); got != "/x" {
		t.Errorf("joinEntry root = %q", got)
	}
	if got := joinEntry(`C:\d`, "x", true); got != `C:\d\x` {
		t.Errorf("joinEntry windows = %q", got)
	}
}

func TestFiletimeToUnix(t *testing.T) {
	cases := []struct {
		filetime  uint64
		sec, nsec int64
	}{
		{unixEpochFiletime, 0, 0},
		{unixEpochFiletime + 15_000_001, 1, 500_000_100},
		{unixEpochFiletime - 1, -1, 999_999_900}, // 100 ns before 1970: negative seconds, positive nanoseconds
		{unixEpochFiletime - 10_000_000, -1, 0},
		{0, -11644473600, 0}, // 1601-01-01
	}
	for _, c := range cases {
		if sec, nsec := filetimeToUnix(c.filetime); sec != c.sec || nsec != c.nsec {
			t.Errorf("filetimeToUnix(%d) = %d, %d; want %d, %d", c.filetime, sec, nsec, c.sec, c.nsec)
		}
	}
}

func TestStripVerbatimPrefix(t *testing.T) {
	cases := map[string]string{
		`\\?\C:\Users\x`:        `C:\Users\x`,
		`\\?\UNC\server\share`:  `\\server\share`,
		`C:\plain`:              `C:\plain`,
		`\\server\share\folder`: `\\server\share\folder`,
	}
	for in, want := range cases {
		if got := stripVerbatimPrefix(in); got != want {
			t.Errorf("stripVerbatimPrefix(%q) = %q; want %q", in, got, want)
		}
	}
}

// TestDecodeNameMatchesNode checks that x/text's UTF-8 decoder replaces invalid bytes exactly like Node's
// Buffer toString (one U+FFFD per maximal subpart), over fixed and random names.
func TestDecodeNameMatchesNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	names := [][]byte{
		{0xED, 0xA0, 0x80}, {0xC0, 0xAF}, {0xF4, 0x90, 0x80, 0x80}, {0xE2, 0x82, 'x'}, {0xF0, 0x9F, 0x98, 0x41},
		{0xE2, 0x82, 0xE2, 0x82, 0xAC}, {'a', 0xFF}, {0xF0, 0x9F, 0x98}, {0xEF, 0xBB, 0xBF, 'b'}, []byte("plain é"),
	}
	r := rand.New(rand.NewPCG(1, 1))
	pool := []byte{'a', 0x80, 0xBF, 0xC2, 0xC3, 0xA9, 0xE0, 0xA0, 0xED, 0x9F, 0xF0, 0x90, 0xF4, 0x8F, 0xFF, 0xE2, 0x82, 0xAC}
	for range 500 {
		name := make([]byte, 1+r.IntN(8))
		for i := range name {
			name[i] = pool[r.IntN(len(pool))]
		}
		names = append(names, name)
	}
	input := make([][]int, len(names))
	for i, name := range names {
		for _, b := range name {
			input[i] = append(input[i], int(b))
		}
	}
	raw, _ := json.Marshal(input)
	cmd := exec.Command(node, "-e", `const a = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(a.map((b) => Buffer.from(b).toString())));`)
	cmd.Stdin = bytes.NewReader(raw)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	for i, name := range names {
		if got := decodeName(string(name)); got != want[i] {
			t.Errorf("% X: %q; Node %q", name, got, want[i])
		}
	}
}

// TestPathPartsMatchNode compares baseName and dirName with Node's path.posix and path.win32 on random short
// paths of separators, drive letters, colons and names.
func TestPathPartsMatchNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	r := rand.New(rand.NewPCG(5, 6))
	alphabet := []byte(`ab/\:C.z@`)
	paths := []string{"", "/", `\`, "//", `\\`, `\\s\t`, `\\s\t\`, `\\s\\t\u`, "C:", `C:\`, "C:a"}
	for range 3000 {
		p := make([]byte, r.IntN(9))
		for i := range p {
			p[i] = alphabet[r.IntN(len(alphabet))]
		}
		paths = append(paths, string(p))
	}
	raw, _ := json.Marshal(paths)
	cmd := exec.Command(node, "-e", `const { posix, win32 } = require("path");
const a = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(a.map((p) => [posix.basename(p), posix.dirname(p), win32.basename(p), win32.dirname(p)])));`)
	cmd.Stdin = bytes.NewReader(raw)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var want [][4]string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		got := [4]string{baseName(p, false), dirName(p, false), baseName(p, true), dirName(p, true)}
		if got != want[i] {
			t.Errorf("%q: basename/dirname posix, win32 %q; Node %q", p, got, want[i])
		}
	}
}

// appendJSONString writes exactly json.Marshal's bytes for every single byte and for mixed strings (killed
// mutants: characters that must be escaped, such as '<', let through the fast path raw).
func TestAppendJSONStringIsMarshal(t *testing.T) {
	inputs := []string{"", "plain name.txt", "a<b>c&d", `quote"back\slash`, "tab\tnew\nline", "é", "\xff\xfe", "\u2028"}
	for b := range 256 {
		inputs = append(inputs, string([]byte{byte(b)}), "x"+string([]byte{byte(b)})+"y")
	}
	for _, s := range inputs {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("appendJSONString(%q) = %s; json.Marshal %s", s, got, want)
		}
	}
}
