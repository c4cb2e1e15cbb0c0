package fsops

import (
	"encoding/json"
	"math"
	"testing"
)

// TestInfoAppendJSONIsMarshal: the hand-written encoding is byte for byte json.Marshal's, for plain and tricky
// names and extreme numbers.
func TestInfoAppendJSONIsMarshal(t *testing.T) {
	names := []string{"", "a.txt", "with space", `quo"te`, `back\slash`, "<&>", "tab\there", "\x01", "é", "日本",
		"\xff\xfe", "a\u2028b", "\x7f"}
	for _, name := range names {
		for _, info := range []Info{
			{Name: name, Kind: kindFile, Size: 6, MtimeSec: 1_700_000_000, MtimeNsec: 123, Dev: 64512, Ino: 99},
			{Name: name, Kind: kindOther, Size: math.MaxInt64, MtimeSec: math.MinInt64, MtimeNsec: 999_999_999,
				Dev: math.MaxUint64, Ino: 0},
		} {
			want, err := json.Marshal(info)
			if err != nil {
				t.Fatal(err)
			}
			if got := info.AppendJSON(nil); string(got) != string(want) {
				t.Errorf("AppendJSON(%q) = %s, want %s", name, got, want)
			}
		}
	}
}
