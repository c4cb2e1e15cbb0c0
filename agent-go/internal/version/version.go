// Package version holds the agent's version string, which hello reports and --version prints.
package version

// Version is the agent's release version. The build sets it with
// -ldflags "-X github.com/outpost-dev/outpost/agent-go/internal/version.Version=<version>"; a plain
// `go build` leaves "dev".
var Version = "dev"
