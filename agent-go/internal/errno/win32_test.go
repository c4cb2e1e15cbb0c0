package errno

import "testing"

// TestWin32Table checks libuv's translations pi-env's table lists, plus libuv-only entries and the default.
func TestWin32Table(t *testing.T) {
	cases := map[string][]uint32{
		"EISDIR":       {1},
		"ENOENT":       {2, 3, 15, 123, 161, 4392, 126, 267},
		"EMFILE":       {4},
		"EPERM":        {5, 1314},
		"EBADF":        {6},
		"ENOMEM":       {8, 14},
		"EXDEV":        {17},
		"EROFS":        {19},
		"EBUSY":        {32, 33},
		"ENOSPC":       {39, 82, 112},
		"ENOTSUP":      {50},
		"EEXIST":       {80, 183},
		"EINVAL":       {13, 87, 122, 131, 1464},
		"ENOTEMPTY":    {145},
		"ENAMETOOLONG": {206},
		"EACCES":       {740, 1920, 998},
		"ELOOP":        {1921},
		"EPIPE":        {232, 233},
		"EOF":          {109},
		"UNKNOWN":      {0, 7, 9999, 0xFFFFFFFF},
	}
	for code, numbers := range cases {
		for _, n := range numbers {
			if got := FromWin32(n); got != code {
				t.Errorf("FromWin32(%d) = %s; want %s", n, got, code)
			}
		}
	}
	for n, code := range win32Codes {
		if Description(code) == "" {
			t.Errorf("%d → %s has no description", n, code)
		}
	}
}
