package search

import (
	"strconv"
	"unicode/utf8"
)

// appendMatch appends m as the page's JSON (the same document encoding/json would write for Match, without its
// reflection: a search may page a million matches).
func appendMatch(dst []byte, m *Match) []byte {
	dst = append(dst, `{"path":`...)
	dst = appendString(dst, m.Path)
	dst = append(dst, `,"line":`...)
	dst = strconv.AppendInt(dst, int64(m.Line), 10)
	dst = append(dst, `,"text":`...)
	dst = appendString(dst, m.Text)
	dst = append(dst, `,"submatches":[`...)
	for i, s := range m.Submatches {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"start":`...)
		dst = strconv.AppendInt(dst, int64(s.Start), 10)
		dst = append(dst, `,"end":`...)
		dst = strconv.AppendInt(dst, int64(s.End), 10)
		dst = append(dst, '}')
	}
	dst = append(dst, `],"before":`...)
	dst = appendStrings(dst, m.Before)
	dst = append(dst, `,"after":`...)
	dst = appendStrings(dst, m.After)
	return append(dst, '}')
}

func appendStrings(dst []byte, list []string) []byte {
	dst = append(dst, '[')
	for i, s := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s)
	}
	return append(dst, ']')
}

const hexDigits = "0123456789abcdef"

// appendString appends s (valid UTF-8: texts are decoded first) as a JSON string.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == '\u2028' || r == '\u2029' {
				// Valid JSON either way; escaped as encoding/json does.
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\u202`...)
				dst = append(dst, hexDigits[r&0xf])
				start = i + size
			}
			i += size
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
