package server

import "bytes"

// topLevelOp finds the raw value of the key "op" in a JSON object that json.Valid accepted, as a map decode
// would (the last of duplicate keys wins). ok is false when the input is not an object or a key has an escape:
// the caller then decodes it fully.
func topLevelOp(data []byte) (value []byte, found, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false, false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return nil, false, true
	}
	for i < len(data) {
		// A key: a string without escapes (valid JSON guarantees the closing quote).
		end := bytes.IndexByte(data[i+1:], '"') + i + 1
		key := data[i+1 : end]
		if bytes.IndexByte(key, '\\') >= 0 {
			return nil, false, false
		}
		i = skipSpace(data, end+1) + 1 // past the colon
		i = skipSpace(data, i)
		start := i
		i = skipValue(data, i)
		if string(key) == "op" {
			value, found = data[start:i], true
		}
		i = skipSpace(data, i)
		if i >= len(data) || data[i] == '}' {
			return value, found, true
		}
		i = skipSpace(data, i+1) // past the comma
	}
	return value, found, true
}

// skipSpace returns the index of the first non-whitespace byte at or after i.
func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue returns the index just past the valid JSON value starting at i.
func skipValue(data []byte, i int) int {
	depth := 0
	for i < len(data) {
		switch c := data[i]; c {
		case '"':
			i = skipString(data, i)
		case '{', '[':
			depth++
			i++
		case '}', ']':
			if depth == 0 {
				return i
			}
			depth--
			i++
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
			i++
		default:
			i++
		}
		if depth == 0 && i > 0 && (data[i-1] == '"' || data[i-1] == '}' || data[i-1] == ']') {
			return i
		}
	}
	return i
}

// skipString returns the index just past the string starting at i (data[i] is its opening quote).
func skipString(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}
