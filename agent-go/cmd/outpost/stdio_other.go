//go:build !unix

package main

import "os"

// pollable returns f unchanged: only Unix pipes and sockets are switched to the poller.
func pollable(f *os.File) *os.File { return f }

// hungUp reports false: hang-ups are only detected on Unix.
func hungUp(*os.File) bool { return false }
