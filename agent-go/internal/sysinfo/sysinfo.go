// Package sysinfo describes the machine the agent runs on the way Node would: os.tmpdir(), os.homedir(),
// process.cwd(), the Windows per-drive working directories, and pi-env's spellings of the OS and architecture.
package sysinfo

import (
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"
)

// termuxPrefix is Termux's $PREFIX when the variable is unset.
const termuxPrefix = "/data/data/com.termux/files/usr"

// Info is a snapshot of the machine's description, taken once at start-up.
type Info struct {
	// OS is pi-env's spelling: linux, macos, android, windows (others as Go names them).
	OS string
	// Arch is pi-env's spelling: x86_64, aarch64, ...
	Arch string
	// Home is os.homedir().
	Home string
	// Separator is the path separator, "/" or "\".
	Separator string
	// TempDir is os.tmpdir().
	TempDir string
	// Cwd is the agent's working directory ("" if it cannot be determined).
	Cwd string
	// DriveCwds maps a drive ("C:") to its working directory on Windows; empty elsewhere.
	DriveCwds map[string]string
}

// Current describes this machine now.
func Current() Info {
	env := osEnv{}
	cwd, err := os.Getwd()
	if err != nil {
		cwd = ""
	}
	return Info{
		OS:        OSName(runtime.GOOS),
		Arch:      ArchName(runtime.GOARCH),
		Home:      homeDir(runtime.GOOS, env, passwdHome),
		Separator: string(filepath.Separator),
		TempDir:   tempDir(runtime.GOOS, env),
		Cwd:       cwd,
		DriveCwds: driveCwds(runtime.GOOS, os.Environ()),
	}
}

// TempDir returns os.tmpdir() for this machine.
func TempDir() string { return tempDir(runtime.GOOS, osEnv{}) }

// HomeDir returns os.homedir() for this machine.
func HomeDir() string { return homeDir(runtime.GOOS, osEnv{}, passwdHome) }

// OSName maps a GOOS to the name pi-env reports (Rust's std::env::consts::OS).
func OSName(goos string) string {
	if goos == "darwin" {
		return "macos"
	}
	return goos
}

// ArchName maps a GOARCH to the name pi-env reports (Rust's std::env::consts::ARCH).
func ArchName(goarch string) string {
	switch goarch {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	case "386":
		return "x86"
	case "loong64":
		return "loongarch64"
	case "mipsle":
		return "mips"
	case "mips64le":
		return "mips64"
	case "ppc64", "ppc64le":
		return "powerpc64"
	}
	return goarch
}

// environment reads variables; tests substitute a map.
type environment interface {
	LookupEnv(key string) (string, bool)
}

type osEnv struct{}

func (osEnv) LookupEnv(key string) (string, bool) { return os.LookupEnv(key) }

// getenv returns a variable's value, "" when unset.
func getenv(env environment, key string) string {
	v, _ := env.LookupEnv(key)
	return v
}

// tempDir follows Node's os.tmpdir(): POSIX takes the first non-empty of TMPDIR, TMP, TEMP, else /tmp (Termux's
// Node: $PREFIX/tmp), and drops one trailing "/" unless the path is "/". Windows takes TEMP, TMP, else
// %SystemRoot%\temp (or %windir%\temp), and drops one trailing "\" unless the path is a drive root.
func tempDir(goos string, env environment) string {
	if goos == "windows" {
		dir := firstNonEmpty(env, "TEMP", "TMP")
		if dir == "" {
			root := firstNonEmpty(env, "SystemRoot", "windir")
			if root == "" {
				// Node interpolates the missing value as the string "undefined".
				root = "undefined"
			}
			dir = root + `\temp`
		}
		if len(dir) > 1 && strings.HasSuffix(dir, `\`) && !strings.HasSuffix(dir, `:\`) {
			dir = dir[:len(dir)-1]
		}
		return dir
	}
	dir := firstNonEmpty(env, "TMPDIR", "TMP", "TEMP")
	if dir == "" {
		dir = "/tmp"
		if goos == "android" {
			prefix := getenv(env, "PREFIX")
			if prefix == "" {
				prefix = termuxPrefix
			}
			dir = prefix + "/tmp"
		}
	}
	if len(dir) > 1 && strings.HasSuffix(dir, "/") {
		dir = dir[:len(dir)-1]
	}
	return dir
}

func firstNonEmpty(env environment, keys ...string) string {
	for _, key := range keys {
		if v := getenv(env, key); v != "" {
			return v
		}
	}
	return ""
}

// homeDir follows libuv's uv_os_homedir, which Node's os.homedir() uses: the variable (HOME, or USERPROFILE on
// Windows) when it is set — even to "" — else the account database.
func homeDir(goos string, env environment, account func() string) string {
	key := "HOME"
	if goos == "windows" {
		key = "USERPROFILE"
	}
	if v, ok := env.LookupEnv(key); ok {
		return v
	}
	return account()
}

// passwdHome returns the current user's home from the account database, "" if unknown.
func passwdHome() string {
	u, err := user.Current()
	if err != nil {
		return ""
	}
	return u.HomeDir
}

// driveCwds collects Windows' hidden "=C:=C:\dir" variables into {"C:": `C:\dir`}.
func driveCwds(goos string, environ []string) map[string]string {
	out := map[string]string{}
	if goos != "windows" {
		return out
	}
	for _, kv := range environ {
		// "=C:=C:\dir": the key is "=C:", so the separating "=" is at index 3.
		if len(kv) < 4 || kv[0] != '=' || kv[2] != ':' || kv[3] != '=' || !isLetter(kv[1]) {
			continue
		}
		out[kv[1:3]] = kv[4:]
	}
	return out
}

func isLetter(b byte) bool { return (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') }
