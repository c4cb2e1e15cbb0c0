package execop

import (
	"slices"
	"strings"
	"testing"
)

func TestQuoteWindowsArg(t *testing.T) {
	// The expected outputs are the examples in libuv's quote_cmd_arg.
	cases := map[string]string{
		``:                   `""`,
		`plain`:              `plain`,
		`hello world`:        `"hello world"`,
		"tab\there":          "\"tab\there\"",
		`hello"world`:        `"hello\"world"`,
		`hello""world`:       `"hello\"\"world"`,
		`hello\world`:        `hello\world`,
		`hello\\world`:       `hello\\world`,
		`hello\"world`:       `"hello\\\"world"`,
		`hello\\"world`:      `"hello\\\\\"world"`,
		`hello world\`:       `"hello world\\"`,
		`C:\Program Files\x`: `"C:\Program Files\x"`,
		`ü € 😀`:              `"ü € 😀"`,
	}
	for in, want := range cases {
		if got := quoteWindowsArg(in); got != want {
			t.Errorf("quote(%q) = %q, want %q", in, got, want)
		}
	}
	if got := windowsCommandLine([]string{`C:\Git\bin\bash.exe`, "-c", `echo "hi there"`}); got != `C:\Git\bin\bash.exe -c "echo \"hi there\""` {
		t.Errorf("command line %q", got)
	}
}

func TestSearchWindowsPath(t *testing.T) {
	files := map[string]bool{
		`C:\work\tool.exe`:       true,
		`C:\bin\git.exe`:         true,
		`C:\bin\script.bat`:      true,
		`C:\quoted dir\q.com`:    true,
		`C:\bin\data.txt`:        true,
		`C:\bin\data.txt.exe`:    true,
		`C:\work\sub\rel.exe`:    true,
		`C:\work\sub/rel.exe`:    true,
		`D:\other\x.exe`:         true,
		`\\server\share\unc.exe`: true,
		`C:\root.exe`:            true,
		`C:\work\both.com`:       true,
		`C:\work\both.exe`:       true,
		`C:\bin\node`:            true,
		`C:\bin\node.exe`:        true,
		`C:\bin\.hidden`:         true,
		`C:\bin\trail.`:          true,
		`C:\bin\trail..exe`:      true,
	}
	isFile := func(p string) bool { return files[p] }
	path := `C:\bin;;"C:\quoted dir";D:\other`
	cases := []struct {
		file, want string
		skipCwd    bool
	}{
		{"tool", `C:\work\tool.exe`, false},
		{"tool", "", true},
		{"git", `C:\bin\git.exe`, false},
		{"git.exe", `C:\bin\git.exe`, false},
		{"script.bat", `C:\bin\script.bat`, false},
		{"script", "", false}, // .bat is never appended
		{"q", `C:\quoted dir\q.com`, false},
		{"data.txt", `C:\bin\data.txt`, false},
		{"x", `D:\other\x.exe`, false},
		{`sub\rel`, `C:\work\sub\rel.exe`, false},
		{`sub/rel.exe`, `C:\work\sub/rel.exe`, false},
		{`\root`, `C:\root.exe`, false},
		{`D:\other\x`, `D:\other\x.exe`, false},
		{`\\server\share\unc`, `\\server\share\unc.exe`, false},
		{"both", `C:\work\both.com`, false},
		{"node", `C:\bin\node.exe`, false}, // a name without extension is only tried with .com/.exe
		// An extension is a dot anywhere but at the end of the name (libuv: dot[1] != 0), even a leading one.
		{".hidden", `C:\bin\.hidden`, false},
		{"trail.", `C:\bin\trail..exe`, false},
		{"", "", false},
		{".", "", false},
		{"missing", "", false},
	}
	for _, c := range cases {
		got, ok := searchWindowsPath(c.file, `C:\work`, path, c.skipCwd, isFile)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("search(%q, skipCwd=%v) = %q %v, want %q", c.file, c.skipCwd, got, ok, c.want)
		}
	}
	if !isBatchFile(`C:\bin\SCRIPT.CMD`) || !isBatchFile(`x.bat`) || !isBatchFile(`x.bat. .`) || isBatchFile(`x.exe`) ||
		isBatchFile(`d.bat\y`) {
		t.Error("isBatchFile")
	}
}

func TestWindowsEnvBlock(t *testing.T) {
	agent := map[string]string{"SYSTEMROOT": `C:\Windows`, "PATH": `C:\agent`, "TEMP": `C:\Temp`}
	lookup := func(k string) (string, bool) {
		v, ok := agent[strings.ToUpper(k)]
		return v, ok
	}
	entries := []envEntry{{key: "b", value: "1"}, {key: "Path", value: `C:\mine`}, {key: "A1", value: "x"}, {key: "A", value: "y"}, {key: "PATH", value: `C:\upper`}, {key: "😀", value: "e"}, {key: "\uFF5E", value: "f"}}
	got := windowsEnvBlock(entries, lookup)
	want := []string{"A1=x", "A=y", `PATH=C:\upper`, `SYSTEMROOT=C:\Windows`, `TEMP=C:\Temp`, "b=1", "😀=e", "\uFF5E=f"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	// Required variables come from the agent even into an empty environment.
	if got := windowsEnvBlock(nil, lookup); !slices.Equal(got, []string{`PATH=C:\agent`, `SYSTEMROOT=C:\Windows`, `TEMP=C:\Temp`}) {
		t.Fatalf("empty env: %q", got)
	}
}

func TestGitBashNotFound(t *testing.T) {
	got := gitBashNotFound([]string{`C:\Program Files\Git\bin\bash.exe`, `C:\Program Files (x86)\Git\bin\bash.exe`})
	want := "No bash shell found. Options:\n  1. Install Git for Windows: https://git-scm.com/download/win\n" +
		"  2. Add your bash to PATH (Cygwin, MSYS2, etc.)\n  3. Configure an explicit shellPath\n\n" +
		"Searched Git Bash in:\n  C:\\Program Files\\Git\\bin\\bash.exe\n  C:\\Program Files (x86)\\Git\\bin\\bash.exe"
	if got != want {
		t.Fatalf("got %q", got)
	}
}

func TestIsLegacyWSLBash(t *testing.T) {
	cases := []struct {
		path, systemRoot string
		want             bool
	}{
		{`C:\Windows\System32\bash.exe`, "", true},
		{`c:/windows/sysnative/BASH.EXE`, "", true},
		{`C:\Windows\System32\..\System32\bash.exe`, "", true},
		{`C:\Windows\System32\wsl.exe`, "", false},
		{`C:\Program Files\Git\bin\bash.exe`, "", false},
		{`/bin/bash`, "", false},
		{`D:\Win\System32\bash.exe`, `D:\Win`, true},
		{`C:\Windows\System32\bash.exe`, `D:\Win`, false},
		{`C:\Windows\System32\bash.exe`, `C:\Windows\`, true},
		{`C:\Windows\System32\bash.exe`, `Windows`, false},
		// The shortest SystemRoot (a drive's root), either separator, and the ends of the drive-letter ranges.
		{`C:\System32\bash.exe`, `C:\`, true},
		{`C:\System32\bash.exe`, `C:`, false},
		{`D:\Win\System32\bash.exe`, `D:/Win`, true},
		{`D:\Win\System32\bash.exe`, `D:|Win`, false},
		{`a:\w\System32\bash.exe`, `a:\w`, true},
		{`z:\w\System32\bash.exe`, `z:\w`, true},
		{`A:\w\System32\bash.exe`, `A:\w`, true},
		{`Z:\w\System32\bash.exe`, `Z:\w`, true},
		{"`:\\w\\System32\\bash.exe", "`:\\w", false},
		{`{:\w\System32\bash.exe`, `{:\w`, false},
		{`@:\w\System32\bash.exe`, `@:\w`, false},
		{`[:\w\System32\bash.exe`, `[:\w`, false},
		{`a:\Windows\System32\bash.exe`, "", true},
		{`Z:\Windows\Sysnative\bash.exe`, "", true},
		{"`:\\Windows\\System32\\bash.exe", "", false},
		{`C:`, "", false},
		// ".." never climbs above the drive's root (path.win32.normalize).
		{`C:\..\Windows\System32\bash.exe`, "", true},
		{`C:\Windows\..\..\Windows\System32\bash.exe`, "", true},
	}
	for _, c := range cases {
		if got := isLegacyWSLBash(c.path, c.systemRoot); got != c.want {
			t.Errorf("isLegacyWSLBash(%q, %q) = %v", c.path, c.systemRoot, got)
		}
	}
}

// The name of an environment line ends at its first "=" after the first character (killed mutant: a one-letter
// name, whose "=" is found at index 0 of the rest, taken for no "=").
func TestEnvKey(t *testing.T) {
	for line, want := range map[string]string{
		"A=1": "A", "PATH=C:\\x=y": "PATH", `=C:=C:\dir`: "=C:", "==x": "=", "NOVALUE": "NOVALUE", "": "", "=": "=",
	} {
		if got := envKey(line); got != want {
			t.Errorf("envKey(%q) = %q; want %q", line, got, want)
		}
	}
}
