package opscmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/outpost-dev/outpost/agent-go/internal/sysinfo"
)

// installResult is what `outpost install --json` prints.
type installResult struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	// Installed is false when a verified copy was already there (the command is idempotent).
	Installed bool `json:"installed"`
}

// runInstall copies the running binary to <dir>/outpost-<sha256>, the path the SDK's deployment uses
// (~/.outpost/bin by default), so a provisioned host needs no upload: the SDK finds it and verifies its hash.
func runInstall(args []string, stdout, stderr io.Writer) int {
	flags := newFlags("install", stderr)
	dir := flags.String("dir", "", "the directory to install into (default ~/.outpost/bin)")
	asJSON := flags.Bool("json", false, "print a JSON object")
	if status, ok := parse(flags, args); !ok {
		return status
	}
	target := *dir
	if target == "" {
		home := sysinfo.Current().Home
		if home == "" {
			fmt.Fprintln(stderr, "outpost install: no home directory is known; pass --dir")
			return 1
		}
		target = filepath.Join(home, ".outpost", "bin")
	}
	result, err := install(target)
	if err != nil {
		fmt.Fprintf(stderr, "outpost install: %v\n", err)
		return 1
	}
	if *asJSON {
		return printJSON(stdout, result)
	}
	verb := "installed"
	if !result.Installed {
		verb = "already installed (verified)"
	}
	fmt.Fprintf(stdout, "%s %s\n", verb, result.Path)
	return 0
}

// install places a verified copy of the running binary in dir: directory mode 0700, file mode 0755, written under a
// temporary name and renamed, so no half-written binary ever carries the final name.
func install(dir string) (installResult, error) {
	self, sum, err := selfIdentity()
	if err != nil {
		return installResult{}, err
	}
	final := filepath.Join(dir, "outpost-"+sum+exeSuffix(runtime.GOOS))
	if existing, err := fileSHA256(final); err == nil && existing == sum {
		return installResult{Path: final, SHA256: sum}, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return installResult{}, fmt.Errorf("create %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return installResult{}, fmt.Errorf("restrict %s to its owner: %w", dir, err)
	}
	if err := copyVerified(self, final, sum); err != nil {
		return installResult{}, err
	}
	return installResult{Path: final, SHA256: sum, Installed: true}, nil
}

// copyVerified copies src to a temporary file beside dst, checks that the copy hashes to sum, and renames it over
// dst (replacing a tampered or truncated file of that name).
func copyVerified(src, dst, sum string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("read %s: %w", src, err)
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".outpost-install-*")
	if err != nil {
		return fmt.Errorf("create a temporary file in %s: %w", filepath.Dir(dst), err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = io.Copy(tmp, in); err != nil {
		return fmt.Errorf("copy to %s: %w", tmp.Name(), err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("flush %s: %w", tmp.Name(), err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if err = os.Chmod(tmp.Name(), 0o755); err != nil {
		return fmt.Errorf("make %s executable: %w", tmp.Name(), err)
	}
	copied, err := fileSHA256(tmp.Name())
	if err != nil {
		return err
	}
	if copied != sum {
		err = errors.New("the copy does not hash like the original (was the binary replaced while copying?)")
		return err
	}
	if err = os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("rename into place: %w", err)
	}
	return nil
}
