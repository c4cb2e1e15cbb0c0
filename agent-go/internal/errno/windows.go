//go:build windows

package errno

import "syscall"

// fromSystem names a Win32 error the way libuv's uv_translate_sys_error does.
func fromSystem(e syscall.Errno) string { return FromWin32(uint32(e)) }

// unknownText is what libuv says for a Win32 error it cannot translate.
func unknownText(syscall.Errno) string { return descriptions[Unknown] }
