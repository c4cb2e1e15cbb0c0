package fsops

import (
	"encoding/json"
	"strconv"
)

// Info is the protocol's `info` object: what lstat or fstat says about one file.
type Info struct {
	// Name is the last component of the path as given (lossily decoded).
	Name string `json:"name"`
	// Kind is file, directory, symlink or other.
	Kind string `json:"kind"`
	// Size is the size in bytes as the file system reports it.
	Size int64 `json:"size"`
	// MtimeSec and MtimeNsec are the modification time; before 1970 the seconds are negative and the
	// nanoseconds still positive.
	MtimeSec  int64 `json:"mtimeSec"`
	MtimeNsec int64 `json:"mtimeNsec"`
	// Dev and Ino identify the file (st_dev, st_ino; on Windows 0 and the creation time).
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

// Kinds of Info.
const (
	kindFile      = "file"
	kindDirectory = "directory"
	kindSymlink   = "symlink"
	kindOther     = "other"
)

// AppendJSON appends the info as the JSON object encoding/json would produce for it (same fields, order and
// string escaping), without reflection: lstat answers are the most frequent reply of all (proto.JSONAppender).
func (i Info) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"name":`...)
	dst = appendJSONString(dst, i.Name)
	dst = append(dst, `,"kind":`...)
	dst = appendJSONString(dst, i.Kind)
	dst = append(dst, `,"size":`...)
	dst = strconv.AppendInt(dst, i.Size, 10)
	dst = append(dst, `,"mtimeSec":`...)
	dst = strconv.AppendInt(dst, i.MtimeSec, 10)
	dst = append(dst, `,"mtimeNsec":`...)
	dst = strconv.AppendInt(dst, i.MtimeNsec, 10)
	dst = append(dst, `,"dev":`...)
	dst = strconv.AppendUint(dst, i.Dev, 10)
	dst = append(dst, `,"ino":`...)
	dst = strconv.AppendUint(dst, i.Ino, 10)
	return append(dst, '}')
}

// appendJSONString appends s as a JSON string. Plain printable ASCII is copied between quotes; anything else
// (escapes, control characters, non-ASCII, invalid UTF-8) is left to encoding/json, so the bytes are always
// what json.Marshal writes.
func appendJSONString(dst []byte, s string) []byte {
	for k := 0; k < len(s); k++ {
		if c := s[k]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			raw, _ := json.Marshal(s)
			return append(dst, raw...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
