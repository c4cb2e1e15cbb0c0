package opscmd

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/agent-go/internal/version"
)

// fakeSelf makes the "running binary" a file with the given content and returns its path and SHA-256.
func fakeSelf(t *testing.T, content string) (string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "outpost")
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	old := selfPath
	selfPath = func() (string, error) { return path, nil }
	t.Cleanup(func() { selfPath = old })
	sum := sha256.Sum256([]byte(content))
	return path, hex.EncodeToString(sum[:])
}

func runArgs(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	status, handled := Run(args, &stdout, &stderr)
	if !handled {
		return -1, stdout.String(), stderr.String()
	}
	return status, stdout.String(), stderr.String()
}

func TestVersionJSON(t *testing.T) {
	path, sum := fakeSelf(t, "agent bytes")
	status, out, _ := runArgs("version", "--json")
	if status != 0 {
		t.Fatalf("status %d", status)
	}
	var info versionInfo
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatalf("not JSON: %q", out)
	}
	want := versionInfo{Version: version.Version, Protocol: 1, OS: info.OS, Arch: info.Arch,
		Platform: platform(runtime.GOOS, runtime.GOARCH), Path: path, SHA256: sum}
	if info != want || info.OS == "" || info.Arch == "" {
		t.Fatalf("got %+v, want %+v", info, want)
	}
}

func TestVersionText(t *testing.T) {
	_, sum := fakeSelf(t, "x")
	status, out, _ := runArgs("version")
	if status != 0 || !strings.HasPrefix(out, "outpost "+version.Version+"\nprotocol 1\n") ||
		!strings.Contains(out, "\nsha256 "+sum+"\n") {
		t.Fatalf("status %d, output %q", status, out)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{{"version", "--bogus"}, {"version", "extra"}, {"install", "--dir"},
		{"install", "a", "b"}} {
		status, out, errOut := runArgs(args...)
		if status != 2 || out != "" || errOut == "" {
			t.Errorf("%v: status %d, stdout %q, stderr %q; want 2 with a message", args, status, out, errOut)
		}
	}
	if status, _, _ := runArgs("serve"); status != -1 {
		t.Fatal("serve must be left to the agent's own command line")
	}
}

func TestPlatformNames(t *testing.T) {
	for _, tc := range [][3]string{{"linux", "amd64", "linux-x64"}, {"darwin", "arm64", "darwin-arm64"},
		{"windows", "amd64", "windows-x64"}, {"android", "arm64", "android-arm64"}} {
		if got := platform(tc[0], tc[1]); got != tc[2] {
			t.Errorf("platform(%s, %s) = %s, want %s", tc[0], tc[1], got, tc[2])
		}
	}
}

func TestInstallIsAtomicIdempotentAndRepairs(t *testing.T) {
	_, sum := fakeSelf(t, "the agent")
	dir := filepath.Join(t.TempDir(), "nested", "bin")
	final := filepath.Join(dir, "outpost-"+sum+exeSuffix(runtime.GOOS))

	first := installJSON(t, "--dir", dir)
	if first != (installResult{Path: final, SHA256: sum, Installed: true}) {
		t.Fatalf("first install: %+v", first)
	}
	checkMode(t, dir, 0o700)
	checkMode(t, final, 0o755)
	if again := installJSON(t, "--dir", dir); again.Installed || again.Path != final {
		t.Fatalf("second install must find the verified copy: %+v", again)
	}
	// A truncated (or tampered) copy under the final name is replaced, never kept.
	if err := os.WriteFile(final, []byte("the ag"), 0o755); err != nil {
		t.Fatal(err)
	}
	if repaired := installJSON(t, "--dir", dir); !repaired.Installed {
		t.Fatalf("a truncated copy must be replaced: %+v", repaired)
	}
	if got, _ := fileSHA256(final); got != sum {
		t.Fatalf("hash after repair %s, want %s", got, sum)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
}

func TestInstallDefaultsToTheSDKsDirectory(t *testing.T) {
	_, sum := fakeSelf(t, "agent")
	home := t.TempDir()
	t.Setenv("HOME", home)        // POSIX
	t.Setenv("USERPROFILE", home) // Windows
	result := installJSON(t)
	if want := filepath.Join(home, ".outpost", "bin", "outpost-"+sum+exeSuffix(runtime.GOOS)); result.Path != want {
		t.Fatalf("installed at %s, want %s", result.Path, want)
	}
}

func installJSON(t *testing.T, args ...string) installResult {
	t.Helper()
	status, out, errOut := runArgs(append([]string{"install", "--json"}, args...)...)
	if status != 0 {
		t.Fatalf("install %v: status %d, stderr %q", args, status, errOut)
	}
	var result installResult
	if err := json.Unmarshal([]byte(out), &result); err != nil {
		t.Fatalf("not JSON: %q", out)
	}
	return result
}

func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	if runtime.GOOS == "windows" {
		return
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != want {
		t.Fatalf("%s mode %o, want %o", path, got, want)
	}
}
