//go:build windows

package errno

import "syscall"

var (
	errENOENT    = syscall.Errno(2)   // ERROR_FILE_NOT_FOUND
	errEISDIR    = syscall.Errno(1)   // ERROR_INVALID_FUNCTION
	errENOTEMPTY = syscall.Errno(145) // ERROR_DIR_NOT_EMPTY
)
