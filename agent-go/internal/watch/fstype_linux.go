package watch

import "golang.org/x/sys/unix"

// unreliableMagics are the statfs f_type values of file systems whose change notifications cannot be trusted
// (network and FUSE file systems), Durable's list.
var unreliableMagics = map[int64]bool{
	0x6969:     true, // NFS
	0x517b:     true, // SMB
	0xff534d42: true, // CIFS
	0xfe534d42: true, // SMB2
	0x65735546: true, // FUSE (sshfs, Android shared storage)
	0x01021997: true, // 9P (WSL2 Windows drives)
	0x0bd00bd0: true, // Lustre
	0x47504653: true, // GPFS
	0x00c36400: true, // Ceph
	0x5346414f: true, // OpenAFS
	0x6b414653: true, // kAFS
	0x5dca2df5: true, // sdcardfs
}

// pollsByDefault tells whether a watcher of these target paths polls unless a mode is forced: when any
// target's nearest existing path (itself or an ancestor) is on an unreliable file system.
func pollsByDefault(paths []string) bool {
	for _, path := range paths {
		for _, candidate := range append([]string{path}, ancestors(path)...) {
			var fs unix.Statfs_t
			if err := retry(func() error { return unix.Statfs(candidate, &fs) }); err != nil {
				continue
			}
			if unreliableMagics[int64(uint32(fs.Type))] {
				return true
			}
			break
		}
	}
	return false
}
