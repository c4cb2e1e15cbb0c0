//go:build !linux

package main

import "os"

// enlargeBuffer leaves the buffer alone: only Linux lets a process resize its pipes.
func enlargeBuffer(*os.File, bool) {}

// pollHangUp adds nothing outside Linux, where POLLHUP alone reports a hang-up.
const pollHangUp = 0
