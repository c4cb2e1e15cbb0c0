package fsops

import "strings"

// These helpers serve the Windows build; they have no build tag so they are unit-tested everywhere.

// unixEpochFiletime is 1970-01-01 in FILETIME units (100 ns since 1601-01-01).
const unixEpochFiletime = 116444736000000000

// filetimeToUnix splits a FILETIME into Unix seconds and nanoseconds the way Node reports times: before 1970
// the seconds are negative and the nanoseconds stay in [0, 1e9).
func filetimeToUnix(filetime uint64) (sec, nsec int64) {
	ticks := int64(filetime) - unixEpochFiletime // 100 ns units; FILETIMEs fit in int64 for any real date
	sec = ticks / 10_000_000
	rest := ticks % 10_000_000
	if rest < 0 {
		sec--
		rest += 10_000_000
	}
	return sec, rest * 100
}

// stripVerbatimPrefix turns the path GetFinalPathNameByHandle returns into the one Node's realpath reports:
// `\\?\C:\x` → `C:\x`, `\\?\UNC\server\share` → `\\server\share`.
func stripVerbatimPrefix(p string) string {
	switch {
	case strings.HasPrefix(p, `\\?\UNC\`):
		return `\\` + p[len(`\\?\UNC\`):]
	case strings.HasPrefix(p, `\\?\`):
		return p[len(`\\?\`):]
	}
	return p
}
