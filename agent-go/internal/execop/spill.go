package execop

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/google/uuid"

	"github.com/outpost-dev/outpost/agent-go/internal/errno"
)

// spill keeps the complete raw output once it crosses a threshold, counting exactly as NodeExecutionEnv does:
// over raw chunks in arrival order across both streams, before the spill starts.
type spill struct {
	limits       spillLimits
	tmpdir       string
	seenBytes    int64
	seenNewlines int64
	prefix       [][]byte
	file         *os.File
	path         string
	err          error
	// onFail is called once when the spill fails, so the command loop can kill the group.
	onFail func()
}

func newSpill(limits spillLimits, tmpdir string, onFail func()) *spill {
	return &spill{limits: limits, tmpdir: tmpdir, onFail: onFail}
}

// add counts or writes one raw chunk. It is called in arrival order, never concurrently.
func (s *spill) add(raw []byte) {
	if len(raw) == 0 || s.err != nil {
		return
	}
	if s.file != nil {
		s.write(raw)
		return
	}
	s.seenBytes += int64(len(raw))
	s.seenNewlines += int64(bytes.Count(raw, []byte{'\n'}))
	lines := s.seenNewlines
	if raw[len(raw)-1] != '\n' {
		lines++
	}
	if float64(s.seenBytes) <= s.limits.afterBytes && float64(lines) <= s.limits.afterLines {
		s.prefix = append(s.prefix, bytes.Clone(raw))
		return
	}
	if err := s.create(); err != nil {
		s.fail(err)
		return
	}
	for _, chunk := range s.prefix {
		if !s.write(chunk) {
			return
		}
	}
	s.prefix = nil
	s.write(raw)
}

// create makes <tmpdir>/tmp-XXXXXX/pi-output-<uuid>.log, as Durable's createTempFile does.
func (s *spill) create() error {
	dir, err := makeTempDir(filepath.Join(s.tmpdir, "tmp-"))
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "pi-output-"+uuid.NewString()+".log")
	file, err := createSpillFile(path)
	if err != nil {
		return errors.New(errno.Fail(err, "open", path).Message)
	}
	s.file, s.path = file, path
	return nil
}

func (s *spill) write(chunk []byte) bool {
	if _, err := s.file.Write(chunk); err != nil {
		s.fail(errors.New(errno.FailHandle(err, "write").Message))
		return false
	}
	return true
}

func (s *spill) fail(err error) {
	s.err = err
	s.prefix = nil
	s.onFail()
}

// finish closes the file; the spill is complete when it returns. It reports the spill failure, if any.
func (s *spill) finish() error {
	if s.file != nil {
		if err := s.file.Close(); err != nil && s.err == nil {
			s.err = errors.New(errno.FailHandle(err, "close").Message)
		}
		s.file = nil
	}
	return s.err
}

// tempChars are the characters libuv's mkdtemp draws from.
const tempChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// makeTempDir creates prefix + 6 random alphanumerics with mode 0700, like Node's fs.mkdtemp.
func makeTempDir(prefix string) (string, error) {
	var lastErr error
	for range 100 {
		var random [6]byte
		if _, err := rand.Read(random[:]); err != nil {
			return "", err
		}
		name := []byte(prefix)
		for _, b := range random {
			name = append(name, tempChars[int(b)%len(tempChars)])
		}
		err := os.Mkdir(string(name), 0o700)
		if err == nil {
			return string(name), nil
		}
		lastErr = err
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	return "", errors.New(errno.Fail(lastErr, "mkdtemp", prefix+"XXXXXX").Message)
}
