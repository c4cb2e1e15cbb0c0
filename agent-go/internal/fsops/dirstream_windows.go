//go:build windows

package fsops

import (
	"errors"
	"io"
	"sync"

	"golang.org/x/sys/windows"
)

// findStream enumerates a directory with FindFirstFileW/FindNextFileW, as libuv's uv_fs_opendir does on Windows
// (Node's fs.opendir, behind openDirReader). The enumeration handle is the system's own, so the directory is
// shared with others exactly as it is under Node (renames and removals of a directory being read behave the
// same); "." and ".." are skipped.
type findStream struct {
	mu      sync.Mutex
	handle  windows.Handle
	pending *windows.Win32finddata // the entry FindFirstFileW returned, not handed out yet
	ended   bool
}

// openDirStream checks the directory as opendir does (a file fails ENOTDIR), then starts the enumeration.
func openDirStream(path string) (dirStream, error) {
	dir, err := openDirectory(path)
	if err != nil {
		return nil, err
	}
	_ = dir.Close()
	pattern, err := windows.UTF16PtrFromString(joinEntry(path, "*", true))
	if err != nil {
		return nil, err
	}
	var data windows.Win32finddata
	handle, err := windows.FindFirstFile(pattern, &data)
	if errors.Is(err, windows.ERROR_FILE_NOT_FOUND) {
		return &findStream{ended: true}, nil // nothing matches: an empty enumeration, as libuv takes it
	}
	if err != nil {
		return nil, err
	}
	return &findStream{handle: handle, pending: &data}, nil
}

// Readdirnames returns up to n names (all when n <= 0); io.EOF once nothing is left.
func (s *findStream) Readdirnames(n int) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for (n <= 0 || len(names) < n) && !s.ended {
		data := s.pending
		s.pending = nil
		if data == nil {
			data = new(windows.Win32finddata)
			if err := windows.FindNextFile(s.handle, data); err != nil {
				if errors.Is(err, windows.ERROR_NO_MORE_FILES) {
					s.ended = true
					break
				}
				return names, err
			}
		}
		name := windows.UTF16ToString(data.FileName[:])
		if name != "." && name != ".." {
			names = append(names, name)
		}
	}
	if len(names) == 0 && s.ended && n > 0 {
		return nil, io.EOF
	}
	return names, nil
}

// Close ends the enumeration.
func (s *findStream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handle == 0 {
		return nil
	}
	err := windows.FindClose(s.handle)
	s.handle = 0
	return err
}
