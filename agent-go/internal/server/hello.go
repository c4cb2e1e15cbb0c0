package server

import (
	"encoding/json"
	"os"
	"slices"

	"github.com/outpost-dev/outpost/agent-go/internal/proto"
	"github.com/outpost-dev/outpost/agent-go/internal/version"
)

// ExecFeatures are the Outpost additions to exec, announced when the agent serves exec.
var ExecFeatures = []string{"exec.envUnset", "exec.window"}

// protocol1Ops are the operations of pi-env protocol 1; any other served op is an Outpost addition and is
// listed in hello's features.
var protocol1Ops = map[string]bool{
	"hello": true, "lstat": true, "realpath": true, "write": true, "writeChunk": true, "truncate": true,
	"fsync": true, "rename": true, "mkdir": true, "rm": true, "mkdtemp": true, "open": true, "pread": true,
	"fstat": true, "scanLines": true, "opendir": true, "readdir": true, "close": true, "exec": true,
	"watch": true,
}

// features lists the configured extras, ExecFeatures when exec is served, and every served op beyond protocol
// 1, sorted and without duplicates.
func features(extra []string, ops ...map[string]proto.Handler) []string {
	// Never nil: hello must send [], not null.
	out := append([]string{}, extra...)
	for _, table := range ops {
		if table["exec"] != nil {
			out = append(out, ExecFeatures...)
		}
		for op := range table {
			if !protocol1Ops[op] {
				out = append(out, op)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// hello answers the first request of a connection (and any later one). The requested protocol is ignored: the
// agent speaks 1. The answer never changes, so it is encoded once.
func (s *server) hello() proto.Reply {
	s.helloOnce.Do(func() {
		raw, err := json.Marshal(s.helloFields())
		if err == nil {
			s.helloJSON = raw
		}
	})
	if s.helloJSON == nil {
		return proto.Reply{JSON: s.helloFields()}
	}
	return proto.Reply{JSON: s.helloJSON}
}

// helloFields are hello's result fields.
func (s *server) helloFields() map[string]any {
	info := s.cfg.Info
	driveCwds := info.DriveCwds
	if driveCwds == nil {
		driveCwds = map[string]string{}
	}
	return map[string]any{
		"protocol":  Protocol,
		"version":   version.Version,
		"os":        info.OS,
		"arch":      info.Arch,
		"home":      info.Home,
		"separator": info.Separator,
		"tmpdir":    info.TempDir,
		"cwd":       info.Cwd,
		"driveCwds": driveCwds,
		"pid":       os.Getpid(),
		"features":  s.features,
	}
}
