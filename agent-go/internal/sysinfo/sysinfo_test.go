package sysinfo

import (
	"maps"
	"runtime"
	"testing"
)

type mapEnv map[string]string

func (m mapEnv) LookupEnv(key string) (string, bool) {
	v, ok := m[key]
	return v, ok
}

func TestTempDir(t *testing.T) {
	cases := []struct {
		name string
		goos string
		env  mapEnv
		want string
	}{
		{"TMPDIR first", "linux", mapEnv{"TMPDIR": "/a", "TMP": "/b", "TEMP": "/c"}, "/a"},
		{"empty TMPDIR skipped", "linux", mapEnv{"TMPDIR": "", "TMP": "/b"}, "/b"},
		{"TEMP last", "darwin", mapEnv{"TEMP": "/c/"}, "/c"},
		{"one trailing slash removed", "linux", mapEnv{"TMPDIR": "/x//"}, "/x/"},
		{"root kept", "linux", mapEnv{"TMPDIR": "/"}, "/"},
		{"default", "linux", mapEnv{}, "/tmp"},
		{"termux prefix", "android", mapEnv{"PREFIX": "/data/usr"}, "/data/usr/tmp"},
		{"termux default prefix", "android", mapEnv{}, "/data/data/com.termux/files/usr/tmp"},
		{"android honours TMPDIR", "android", mapEnv{"TMPDIR": "/t"}, "/t"},
		{"windows TEMP", "windows", mapEnv{"TEMP": `C:\T\`, "TMP": `D:\`}, `C:\T`},
		{"windows TMP", "windows", mapEnv{"TMP": `D:\`}, `D:\`},
		{"windows SystemRoot", "windows", mapEnv{"SystemRoot": `C:\Windows`}, `C:\Windows\temp`},
		{"windows windir", "windows", mapEnv{"windir": `C:\W`}, `C:\W\temp`},
		{"windows nothing", "windows", mapEnv{}, `undefined\temp`},
		{"windows lone backslash kept", "windows", mapEnv{"TEMP": `\`}, `\`},
		{"windows two backslashes lose one", "windows", mapEnv{"TEMP": `\\`}, `\`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tempDir(tc.goos, tc.env); got != tc.want {
				t.Fatalf("tempDir = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHomeDir(t *testing.T) {
	account := func() string { return "/from/passwd" }
	cases := []struct {
		name string
		goos string
		env  mapEnv
		want string
	}{
		{"HOME", "linux", mapEnv{"HOME": "/h"}, "/h"},
		{"empty HOME is kept", "linux", mapEnv{"HOME": ""}, ""},
		{"unset HOME", "darwin", mapEnv{}, "/from/passwd"},
		{"USERPROFILE", "windows", mapEnv{"USERPROFILE": `C:\Users\u`, "HOME": "/h"}, `C:\Users\u`},
		{"unset USERPROFILE", "windows", mapEnv{"HOME": "/h"}, "/from/passwd"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := homeDir(tc.goos, tc.env, account); got != tc.want {
				t.Fatalf("homeDir = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDriveCwds(t *testing.T) {
	// The ends of the letter ranges and the bytes just outside them, and the shortest line (an empty value).
	environ := []string{"=C:=C:\\work", "=D:=D:\\", "PATH=x", "=ExitCode=00000000", "=::=::\\", "=1:=bad",
		"=A:=A:\\a", "=Z:=Z:\\z", "=a:=a:\\a", "=z:=z:\\z", "=@:=x", "=[:=x", "=`:=x", "={:=x", "=E:=", "=F:"}
	want := map[string]string{"C:": `C:\work`, "D:": `D:\`, "A:": `A:\a`, "Z:": `Z:\z`, "a:": `a:\a`, "z:": `z:\z`, "E:": ""}
	if got := driveCwds("windows", environ); !maps.Equal(got, want) {
		t.Fatalf("driveCwds = %v, want %v", got, want)
	}
	if got := driveCwds("linux", environ); got == nil || len(got) != 0 {
		t.Fatalf("driveCwds on linux = %v, want an empty map", got)
	}
}

func TestNames(t *testing.T) {
	cases := []struct{ in, want string }{
		{"linux", "linux"}, {"darwin", "macos"}, {"android", "android"}, {"windows", "windows"},
	}
	for _, tc := range cases {
		if got := OSName(tc.in); got != tc.want {
			t.Errorf("OSName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	arches := []struct{ in, want string }{{"amd64", "x86_64"}, {"arm64", "aarch64"}, {"386", "x86"}, {"riscv64", "riscv64"}}
	for _, tc := range arches {
		if got := ArchName(tc.in); got != tc.want {
			t.Errorf("ArchName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCurrent(t *testing.T) {
	t.Setenv("TMPDIR", "/some/tmp/")
	t.Setenv("HOME", "/some/home")
	info := Current()
	if runtime.GOOS != "windows" && (info.TempDir != "/some/tmp" || info.Home != "/some/home" || info.Separator != "/") {
		t.Fatalf("Current() = %+v", info)
	}
	if info.Cwd == "" || info.OS != OSName(runtime.GOOS) || info.DriveCwds == nil {
		t.Fatalf("Current() = %+v", info)
	}
}
