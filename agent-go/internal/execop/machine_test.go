package execop

import (
	"io/fs"
	"os"
	"time"
)

// fakeFile is a file of a made-up machine.
type fakeFile struct {
	name string
	mode fs.FileMode
}

func (f fakeFile) Name() string       { return f.name }
func (f fakeFile) Size() int64        { return 0 }
func (f fakeFile) Mode() fs.FileMode  { return f.mode }
func (f fakeFile) ModTime() time.Time { return time.Time{} }
func (f fakeFile) IsDir() bool        { return f.mode.IsDir() }
func (f fakeFile) Sys() any           { return nil }

// fakeMachine is a machine made of files (path → mode; executable when any x bit is set) and an environment;
// it records every path looked at, so a test sees that planning looks nowhere else.
type fakeMachine struct {
	files  map[string]fs.FileMode
	env    []string
	looked []string
}

func (f *fakeMachine) machine() machine {
	return machine{
		environ: func() []string { return f.env },
		getenv: func(key string) (string, bool) {
			for _, kv := range f.env {
				if len(kv) > len(key) && kv[:len(key)] == key && kv[len(key)] == '=' {
					return kv[len(key)+1:], true
				}
			}
			return "", false
		},
		stat: func(path string) (fs.FileInfo, error) {
			f.looked = append(f.looked, path)
			mode, ok := f.files[path]
			if !ok {
				return nil, &fs.PathError{Op: "stat", Path: path, Err: os.ErrNotExist}
			}
			return fakeFile{name: path, mode: mode}, nil
		},
		canExecute: func(path string) bool { return f.files[path]&0o111 != 0 },
		findBash:   func() string { return "" },
	}
}
