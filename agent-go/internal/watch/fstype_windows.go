package watch

// pollsByDefault is always true on Windows: native watchers keep directories open, which blocks renaming their
// parents (Durable's rule).
func pollsByDefault([]string) bool { return true }
