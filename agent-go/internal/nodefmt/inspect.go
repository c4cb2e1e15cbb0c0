// Package nodefmt formats values the way Node prints them in its error messages, so the agent's messages read
// like the ones NodeExecutionEnv's callers see.
package nodefmt

import "strings"

// InspectString quotes s as Node's util.inspect does: single quotes, or double quotes when s holds a single quote
// but no double quote, or backticks when it holds both (and no backtick or "${"); control characters escaped as
// \b \t \n \f \r or \xHH with uppercase hex, backslashes doubled.
func InspectString(s string) string {
	quote := byte('\'')
	if strings.ContainsRune(s, '\'') {
		switch {
		case !strings.ContainsRune(s, '"'):
			quote = '"'
		case !strings.ContainsRune(s, '`') && !strings.Contains(s, "${"):
			quote = '`'
		}
	}
	var b strings.Builder
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == '\'' && quote == '\'':
			b.WriteString(`\'`)
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x20 || r == 0x7F:
			b.WriteString(controlEscape(byte(r)))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

func controlEscape(c byte) string {
	switch c {
	case '\b':
		return `\b`
	case '\t':
		return `\t`
	case '\n':
		return `\n`
	case '\f':
		return `\f`
	case '\r':
		return `\r`
	}
	const hex = "0123456789ABCDEF"
	return `\x` + string([]byte{hex[c>>4], hex[c&15]})
}
