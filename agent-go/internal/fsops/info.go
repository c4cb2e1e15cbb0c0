package fsops

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
