package listfiles

import (
	"testing"

	"go.uber.org/goleak"
)

// Every walk joins its workers and its abort watcher before it returns.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
