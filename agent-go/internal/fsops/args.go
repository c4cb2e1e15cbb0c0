package fsops

import (
	"math"
	"strings"

	"github.com/outpost-dev/outpost/agent-go/internal/nodefmt"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER: every number the client sends is a double.
const maxSafeInteger = 1<<53 - 1

// requirePath checks a path field: present, and free of NUL bytes, which Node refuses before any system call
// with ERR_INVALID_ARG_VALUE (argument names as Node's: path, oldPath, newPath, prefix).
func requirePath(op, argument string, value *string) (string, *proto.Failure) {
	if value == nil {
		return "", proto.Invalid(op + " needs " + argument)
	}
	if strings.ContainsRune(*value, 0) {
		return "", &proto.Failure{
			Code: "ERR_INVALID_ARG_VALUE",
			Message: "The argument '" + argument + "' must be a string, Uint8Array, or URL without null bytes. " +
				"Received " + nodefmt.InspectString(*value),
		}
	}
	return *value, nil
}

// decodePath decodes a request into args and checks the path field that field points to (inside args), under
// the argument name Node would give it. Every operation on a path starts with it.
func decodePath(call *proto.Call, args any, field **string, argument string) (string, *proto.Failure) {
	if f := call.Decode(args); f != nil {
		return "", f
	}
	return requirePath(call.Op, argument, *field)
}

// integer checks a numeric field: a whole number within [lowest, highest].
func integer(value float64, lowest, highest float64) bool {
	return !math.IsNaN(value) && value >= lowest && value <= highest && value == math.Trunc(value)
}

// requireHandle checks a handle field: a whole number. Unknown ids are the table's business (EBADF).
func requireHandle(op string, value *float64) (uint64, *proto.Failure) {
	if value == nil || !integer(*value, 0, maxSafeInteger) {
		return 0, proto.Invalid(op + " needs a handle")
	}
	return uint64(*value), nil
}

// flag returns a boolean field's value or its default when absent.
func flag(value *bool, fallback bool) bool {
	if value == nil {
		return fallback
	}
	return *value
}
