package main

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// openTunIn creates the TUN device name inside the network namespace at nsPath (a file `ip netns add` made) and
// returns it. The device lives as long as the returned file is open. TUNSETIFF creates the device in the namespace
// of the calling thread, so this runs on a locked thread that enters the namespace and comes back.
func openTunIn(nsPath, name string) (*os.File, error) {
	type result struct {
		file *os.File
		err  error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		file, back, err := tunInNamespace(nsPath, name)
		if back {
			// Only a thread that is back in its own namespace may serve other goroutines; any other ends with this one.
			runtime.UnlockOSThread()
		}
		done <- result{file, err}
	}()
	r := <-done
	return r.file, r.err
}

// tunInNamespace does openTunIn's work on the locked thread; back says whether the thread is in its own namespace
// again.
func tunInNamespace(nsPath, name string) (*os.File, bool, error) {
	home, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return nil, true, fmt.Errorf("open own network namespace: %w", err)
	}
	defer home.Close()
	target, err := os.Open(nsPath)
	if err != nil {
		return nil, true, fmt.Errorf("open network namespace %s: %w", nsPath, err)
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		return nil, true, fmt.Errorf("enter network namespace %s: %w", nsPath, err)
	}
	file, openErr := openTun(name)
	if err := unix.Setns(int(home.Fd()), unix.CLONE_NEWNET); err != nil {
		if file != nil {
			file.Close()
		}
		return nil, false, fmt.Errorf("leave network namespace %s: %w", nsPath, err)
	}
	return file, true, openErr
}

// openTun creates a TUN device (IP packets, no packet-information header) in the calling thread's namespace.
func openTun(name string) (*os.File, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open /dev/net/tun: %w", err)
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("device name %q: %w", name, err)
	}
	ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("create TUN device %s: %w", name, err)
	}
	// Non-blocking, so reads wait in Go's poller and closing the file ends a pending read (shutdown).
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("TUN device %s non-blocking: %w", name, err)
	}
	return os.NewFile(uintptr(fd), name), nil
}
