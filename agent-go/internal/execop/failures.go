package execop

import (
	"github.com/outpost-dev/outpost/agent-go/internal/nodefmt"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// The spawn failures of planning and spawning, worded as Node words them.

func nulError(subject, value string) *proto.Failure {
	return spawnError(subject + " must be a string without null bytes. Received " + nodefmt.InspectString(value))
}

func spawnError(message string) *proto.Failure {
	return &proto.Failure{Code: "spawn_error", Message: message}
}

// spawnFailure builds Node's spawn error for a libuv code: for the codes Node reports asynchronously the
// message names the program ("spawn /bin/bash ENOENT"); the others are thrown as "spawn <CODE>".
func spawnFailure(program, code string) *proto.Failure {
	switch code {
	case "EACCES", "EAGAIN", "EMFILE", "ENFILE", "ENOENT":
		return spawnError("spawn " + program + " " + code)
	default:
		return spawnError("spawn " + code)
	}
}
