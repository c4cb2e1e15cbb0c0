package fsops

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind (chunk drains, blocking opens).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
