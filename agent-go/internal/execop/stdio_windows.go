//go:build windows

package execop

import (
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Size of each direction's buffer of a child's output pipe, as libuv creates them.
const pipeBufferSize = 64 << 10

// pipeSequence makes each pipe name of this agent unique.
var pipeSequence atomic.Uint64

var (
	kernel32          = windows.NewLazySystemDLL("kernel32.dll")
	procReadFile      = kernel32.NewProc("ReadFile")
	procPeekNamedPipe = kernel32.NewProc("PeekNamedPipe")
)

// zeroByte is the buffer of zero-byte reads (ReadFile wants a valid buffer even for no bytes).
var zeroByte [1]byte

// newOutputPipe creates one of a child's output pipes the way libuv does for Node's stdio "pipe": a named pipe
// whose server end (ours) is opened for overlapped I/O, so it can be read through an I/O completion port, and
// whose client end (the child's) is a plain synchronous handle. Like libuv's, both ends are duplex and the
// pipe has a single instance, so nobody else can connect to it.
func newOutputPipe() (server windows.Handle, child *os.File, err error) {
	for attempt := 0; ; attempt++ {
		name := fmt.Sprintf(`\\.\pipe\outpost\%d-%d`, os.Getpid(), pipeSequence.Add(1))
		server, err = createServer(name)
		if err == nil {
			client, err := connectClient(server, name)
			if err != nil {
				_ = windows.CloseHandle(server)
				return 0, nil, err
			}
			return server, os.NewFile(uintptr(client), name), nil
		}
		// Another process holds the name (FILE_FLAG_FIRST_PIPE_INSTANCE refuses it): take the next one.
		if attempt < 8 && (err == windows.ERROR_ACCESS_DENIED || err == windows.ERROR_PIPE_BUSY) {
			continue
		}
		return 0, nil, fmt.Errorf("create pipe %s: %w", name, err)
	}
}

func createServer(name string) (windows.Handle, error) {
	name16, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return 0, err
	}
	return windows.CreateNamedPipe(name16,
		windows.PIPE_ACCESS_DUPLEX|windows.FILE_FLAG_OVERLAPPED|windows.FILE_FLAG_FIRST_PIPE_INSTANCE|windows.WRITE_DAC,
		windows.PIPE_TYPE_BYTE|windows.PIPE_READMODE_BYTE|windows.PIPE_WAIT,
		1, pipeBufferSize, pipeBufferSize, 0, nil)
}

// connectClient opens the child's end and completes the connection (already made: ERROR_PIPE_CONNECTED).
func connectClient(server windows.Handle, name string) (windows.Handle, error) {
	name16, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return 0, err
	}
	client, err := windows.CreateFile(name16, windows.GENERIC_READ|windows.GENERIC_WRITE|windows.WRITE_DAC, 0, nil,
		windows.OPEN_EXISTING, 0, 0)
	if err != nil {
		return 0, fmt.Errorf("open pipe %s: %w", name, err)
	}
	if err := windows.ConnectNamedPipe(server, nil); err != nil && err != windows.ERROR_PIPE_CONNECTED {
		_ = windows.CloseHandle(client)
		return 0, fmt.Errorf("connect pipe %s: %w", name, err)
	}
	return client, nil
}

// readZero starts an overlapped read of no bytes, which completes once the pipe holds data (or ended): libuv's
// way of waiting for a pipe to become readable.
func readZero(h windows.Handle, ov *windows.Overlapped) error {
	ok, _, err := procReadFile.Call(uintptr(h), uintptr(unsafe.Pointer(&zeroByte[0])), 0, 0,
		uintptr(unsafe.Pointer(ov)))
	if ok != 0 {
		return nil
	}
	return err
}

// peekAvailable returns how many bytes the pipe holds.
func peekAvailable(h windows.Handle) (uint32, error) {
	var avail uint32
	ok, _, err := procPeekNamedPipe.Call(uintptr(h), 0, 0, 0, uintptr(unsafe.Pointer(&avail)), 0)
	if ok == 0 {
		return 0, err
	}
	return avail, nil
}
