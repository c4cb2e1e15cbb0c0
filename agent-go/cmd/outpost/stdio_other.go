//go:build !unix

package main

import "os"

// hungUp reports false: hang-ups are only detected on Unix.
func hungUp(*os.File) bool { return false }
