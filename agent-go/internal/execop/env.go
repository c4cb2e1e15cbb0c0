package execop

import (
	"strings"
)

// mergeEnv builds a command's environment the way Node's spawn sees `{...process.env, ...env}`: the agent's
// environment (when inheriting) with the request's variables laid over it, and the request's null variables
// removed. Like Node's process.env, a variable
// the agent's environment repeats keeps its first position and its last value; nothing is dropped otherwise,
// and PWD is never added.
func mergeEnv(inherit bool, base []string, overlay []envEntry) []envEntry {
	var merged []envEntry
	index := map[string]int{}
	set := func(key, value string) {
		if i, ok := index[key]; ok {
			merged[i].value = value
			return
		}
		index[key] = len(merged)
		merged = append(merged, envEntry{key: key, value: value})
	}
	if inherit {
		for _, kv := range base {
			// A key may start with "=" (Windows drive variables such as "=C:"); the separator is the next one.
			i := strings.IndexByte(kv[min(1, len(kv)):], '=')
			if i < 0 {
				continue
			}
			i += min(1, len(kv))
			set(kv[:i], kv[i+1:])
		}
	}
	for _, e := range overlay {
		if !e.unset {
			set(e.key, e.value)
		} else if i, ok := index[e.key]; ok {
			merged[i].unset = true
		}
	}
	kept := merged[:0]
	for _, e := range merged {
		if !e.unset {
			kept = append(kept, e)
		}
	}
	return kept
}

// envStrings renders entries as KEY=VALUE strings. The result is never nil: os/exec and os.StartProcess treat
// a nil environment as "inherit the agent's".
func envStrings(entries []envEntry) []string {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.key+"="+e.value)
	}
	return out
}

// lookupEnv returns the value of key; foldCase matches names case-insensitively (Windows).
func lookupEnv(entries []envEntry, key string, foldCase bool) (string, bool) {
	for _, e := range entries {
		if e.key == key || foldCase && strings.EqualFold(e.key, key) {
			return e.value, true
		}
	}
	return "", false
}
