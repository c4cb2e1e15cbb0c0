package watch

// PollsByDefault tells whether a watcher of path polls unless a mode is forced: on Windows, and where path (or
// its nearest existing ancestor) is on a network or FUSE file system. For diagnostics (`outpost doctor`).
func PollsByDefault(path string) bool { return pollsByDefault([]string{path}) }
