package opscmd

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime"
)

// selfPath is the running binary; a variable so tests can point it at a file of their own.
var selfPath = os.Executable

// selfIdentity is the running binary's path and hex SHA-256, the name it is installed and deployed under.
func selfIdentity() (path, sum string, err error) {
	path, err = selfPath()
	if err != nil {
		return "", "", fmt.Errorf("find the running binary: %w", err)
	}
	sum, err = fileSHA256(path)
	return path, sum, err
}

// fileSHA256 is the hex SHA-256 of the file at path, the name the SDK deploys a binary under.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// platform is the SDK's name for this build's target (`make dist` directory names): linux-x64, darwin-arm64, ...
func platform(goos, goarch string) string {
	arch := goarch
	if goarch == "amd64" {
		arch = "x64"
	}
	return goos + "-" + arch
}

// exeSuffix is the file-name ending executables need on this system.
func exeSuffix(goos string) string {
	if goos == "windows" {
		return ".exe"
	}
	return ""
}

// hostPlatform is platform for the running binary.
func hostPlatform() string { return platform(runtime.GOOS, runtime.GOARCH) }
