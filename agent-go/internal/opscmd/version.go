package opscmd

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/outpost-dev/outpost/agent-go/internal/server"
	"github.com/outpost-dev/outpost/agent-go/internal/sysinfo"
	"github.com/outpost-dev/outpost/agent-go/internal/version"
)

// versionInfo is what `outpost version --json` prints.
type versionInfo struct {
	Version  string `json:"version"`
	Protocol int    `json:"protocol"`
	// OS and Arch are the names hello reports (pi-env's spelling); Platform is the SDK's (`linux-x64`).
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	Platform string `json:"platform"`
	Path     string `json:"path"`
	SHA256   string `json:"sha256"`
}

// runVersion prints the binary's version, protocol, platform and SHA-256.
func runVersion(args []string, stdout, stderr io.Writer) int {
	flags := newFlags("version", stderr)
	asJSON := flags.Bool("json", false, "print a JSON object")
	if status, ok := parse(flags, args); !ok {
		return status
	}
	info, err := currentVersion()
	if err != nil {
		fmt.Fprintf(stderr, "outpost version: %v\n", err)
		return 1
	}
	if *asJSON {
		return printJSON(stdout, info)
	}
	fmt.Fprintf(stdout, "outpost %s\nprotocol %d\nplatform %s (%s %s)\nsha256 %s\npath %s\n", info.Version,
		info.Protocol, info.Platform, info.OS, info.Arch, info.SHA256, info.Path)
	return 0
}

func currentVersion() (versionInfo, error) {
	path, sum, err := selfIdentity()
	if err != nil {
		return versionInfo{}, err
	}
	info := sysinfo.Current()
	return versionInfo{
		Version:  version.Version,
		Protocol: server.Protocol,
		OS:       info.OS,
		Arch:     info.Arch,
		Platform: hostPlatform(),
		Path:     path,
		SHA256:   sum,
	}, nil
}

// printJSON writes value as one line of JSON.
func printJSON(stdout io.Writer, value any) int {
	line, err := json.Marshal(value)
	if err != nil {
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", line)
	return 0
}
