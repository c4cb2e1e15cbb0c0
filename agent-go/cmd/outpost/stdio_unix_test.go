//go:build unix

package main

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

func TestHungUp(t *testing.T) {
	t.Run("pipe", func(t *testing.T) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if _, err := w.Write([]byte("unread")); err != nil {
			t.Fatal(err)
		}
		if hungUp(r) {
			t.Fatal("a pipe with a live writer reads as hung up")
		}
		w.Close()
		if !hungUp(r) {
			t.Fatal("a pipe whose writer closed, with bytes still unread, does not read as hung up")
		}
	})
	t.Run("socket pair", func(t *testing.T) {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		ours, theirs := os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "theirs")
		defer ours.Close()
		if _, err := theirs.Write([]byte("unread")); err != nil {
			t.Fatal(err)
		}
		if hungUp(ours) {
			t.Fatal("a socket with a live peer reads as hung up")
		}
		theirs.Close()
		if !hungUp(ours) {
			t.Fatal("a socket whose peer closed does not read as hung up")
		}
	})
}
