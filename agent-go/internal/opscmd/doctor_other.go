//go:build !linux

package opscmd

import "runtime"

// platformChecks are this system's own checks.
func platformChecks() []func() check { return []func() check{checkOrphans} }

// checkOrphans says what this system offers against commands' descendants outliving the agent
// (spec/semantics.md AL): Windows has the agent's job object, other systems only process groups.
func checkOrphans() check {
	if runtime.GOOS == "windows" {
		return check{Name: "orphans", Verdict: verdictOK, Detail: "commands run in the agent's job object"}
	}
	return check{"orphans", verdictWarn, "no child subreaper on " + runtime.GOOS,
		"a descendant that leaves its command's process group (setsid) can outlive cleanup() and the agent"}
}
