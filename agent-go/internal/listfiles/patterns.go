package listfiles

import "strings"

// pattern is one line of an ignore file (or one glob), parsed as git parses it.
type pattern struct {
	// text is the pattern without its leading `!` and trailing `/`; a leading `/` is kept for anchored patterns
	// and stripped when matching.
	text string
	// negated: the line started with `!` (a match keeps the path).
	negated bool
	// dirOnly: the line ended with `/` (only directories match).
	dirOnly bool
	// basename: the pattern has no other `/`, so it matches an entry's name at any depth.
	basename bool
	// literal: the pattern has no wildcard or escape, so matching is a comparison.
	literal bool
}

// patternList is the patterns of one ignore file (or the globs), in file order; the last matching one wins.
type patternList []pattern

// parsePatterns reads an ignore file's contents as git does: an optional UTF-8 BOM is skipped, lines end at LF
// (a CR before it is dropped; a missing last LF counts as present), `#` starts a comment line, blank lines are skipped and trailing spaces are
// trimmed unless escaped.
func parsePatterns(content []byte) patternList {
	text := string(content)
	text = strings.TrimPrefix(text, "\uFEFF")
	var list patternList
	for len(text) > 0 {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			// git appends the missing newline, so the last line is treated like every other.
			text = ""
		}
		line = strings.TrimSuffix(line, "\r")
		if p, ok := parsePattern(line); ok {
			list = append(list, p)
		}
	}
	return list
}

// parsePattern parses one line; ok is false for comments and blank lines.
func parsePattern(line string) (pattern, bool) {
	if line == "" || line[0] == '#' {
		return pattern{}, false
	}
	line = trimTrailingSpaces(line)
	if line == "" {
		return pattern{}, false
	}
	var p pattern
	if line[0] == '!' {
		p.negated = true
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		p.dirOnly = true
		line = line[:len(line)-1]
	}
	p.basename = strings.IndexByte(line, '/') < 0
	p.text = line
	p.literal = strings.IndexAny(line, `*?[\`) < 0
	return p, true
}

// trimTrailingSpaces drops trailing spaces (not tabs), except one escaped by a backslash; a line ending in a lone
// backslash is kept as it is.
func trimTrailingSpaces(line string) string {
	lastSpace := -1
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case ' ':
			if lastSpace < 0 {
				lastSpace = i
			}
		case '\\':
			i++
			if i == len(line) {
				return line
			}
			lastSpace = -1
		default:
			lastSpace = -1
		}
	}
	if lastSpace >= 0 {
		return line[:lastSpace]
	}
	return line
}

// matches reports whether the pattern matches an entry. rel is the entry's path relative to the pattern's
// base directory, name its last component, isDir whether it is a directory (a symbolic link is not).
func (p *pattern) matches(rel, name string, isDir bool) bool {
	if p.dirOnly && !isDir {
		return false
	}
	if p.basename {
		if p.literal {
			return p.text == name
		}
		return wildmatch(p.text, name, false)
	}
	text := strings.TrimPrefix(p.text, "/")
	if p.literal {
		return text == rel
	}
	return wildmatch(text, rel, true)
}

// decide returns the verdict of the last pattern of the list that matches: ignored (a plain pattern) or kept
// (a negated one); found is false when no pattern matches.
func (l patternList) decide(rel, name string, isDir bool) (ignored, found bool) {
	for i := len(l) - 1; i >= 0; i-- {
		if l[i].matches(rel, name, isDir) {
			return !l[i].negated, true
		}
	}
	return false, false
}
