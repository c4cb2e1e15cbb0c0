package main

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

const versionVar = "github.com/outpost-dev/outpost/agent-go/internal/version.Version"

// build compiles the agent the way tools/dist.sh does and returns the binary's path.
func build(t *testing.T, dir, goarch, version string) string {
	t.Helper()
	out := filepath.Join(dir, "outpost-"+goarch)
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -buildid= -X "+versionVar+"="+version, "-o", out, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build for linux/%s: %v\n%s", goarch, err, output)
	}
	return out
}

func fileHash(t *testing.T, path string) [32]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}

// The Linux agents are static (no interpreter, no dynamic section), carry the version from ldflags, and build
// reproducibly.
func TestStaticReproducibleBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agent; skipped in -short mode")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	const version = "9.8.7-buildtest"
	dir := t.TempDir()
	for _, goarch := range []string{"amd64", "arm64"} {
		t.Run(goarch, func(t *testing.T) {
			bin := build(t, dir, goarch, version)
			f, err := elf.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			for _, prog := range f.Progs {
				if prog.Type == elf.PT_INTERP || prog.Type == elf.PT_DYNAMIC {
					t.Fatalf("program header %v: the binary is not static", prog.Type)
				}
			}
			if f.Section(".dynamic") != nil || f.Section(".interp") != nil {
				t.Fatal("the binary has a dynamic section")
			}
			wantMachine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[goarch]
			if f.Machine != wantMachine {
				t.Fatalf("machine %v, want %v", f.Machine, wantMachine)
			}

			// Same source, same flags, another output path: the same bytes.
			again := build(t, t.TempDir(), goarch, version)
			if fileHash(t, bin) != fileHash(t, again) {
				t.Fatal("two builds differ: the build is not reproducible")
			}

			if goarch != runtime.GOARCH || runtime.GOOS != "linux" {
				return
			}
			out, err := exec.Command(bin, "--version").Output()
			if err != nil {
				t.Fatalf("--version: %v", err)
			}
			if want := "outpost " + version + "\n"; !bytes.Equal(out, []byte(want)) {
				t.Fatalf("--version printed %q, want %q", out, want)
			}
			checkOpsCommands(t, bin, version)
		})
	}
}

// checkOpsCommands runs the real binary's ops subcommands: `version --json` names its own hash, and `install` puts
// a copy under that hash which runs.
func checkOpsCommands(t *testing.T, bin, version string) {
	t.Helper()
	sum := fileHash(t, bin)
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatalf("version --json: %v", err)
	}
	var info struct {
		Version string `json:"version"`
		SHA256  string `json:"sha256"`
	}
	if err := json.Unmarshal(out, &info); err != nil || info.Version != version || info.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("version --json printed %q (%v)", out, err)
	}
	dir := filepath.Join(t.TempDir(), "bin")
	if out, err := exec.Command(bin, "install", "--dir", dir).CombinedOutput(); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	installed := filepath.Join(dir, "outpost-"+info.SHA256)
	if fileHash(t, installed) != sum {
		t.Fatal("the installed copy differs from the binary")
	}
	if out, err := exec.Command(installed, "--version").Output(); err != nil || string(out) != "outpost "+version+"\n" {
		t.Fatalf("the installed copy printed %q (%v)", out, err)
	}
}
