package listfiles

// Outcomes of wildmatch's recursion. Besides "no match" there are two ways to give up early: abortAll means no
// later start position of an enclosing star can match either, abortToDoubleStar means only an enclosing `**` may
// still try further positions.
const (
	matched = iota
	noMatch
	abortAll
	abortToDoubleStar
)

// wildmatch reports whether text matches the gitignore pattern, byte by byte, as git's wildmatch does. With
// pathname set, `*`, `?` and `[...]` never match `/`, and only a `**` next to slashes (or at the pattern's ends)
// crosses directories; without it (a pattern matched against a bare name) `*` matches anything.
func wildmatch(pattern, text string, pathname bool) bool {
	return match(pattern, 0, text, pathname) == matched
}

// match matches pattern[pi:] against text.
func match(pattern string, pi int, text string, pathname bool) int {
	for pi < len(pattern) {
		c := pattern[pi]
		if len(text) == 0 && c != '*' {
			return abortAll
		}
		switch c {
		case '\\':
			// A backslash makes the next byte literal; a trailing one matches nothing.
			pi++
			if pi == len(pattern) || text[0] != pattern[pi] {
				return noMatch
			}
		case '?':
			if pathname && text[0] == '/' {
				return noMatch
			}
		case '*':
			return star(pattern, pi, text, pathname)
		case '[':
			next, in, outcome := class(pattern, pi, text[0])
			if outcome != matched {
				return outcome
			}
			if !in || (pathname && text[0] == '/') {
				return noMatch
			}
			pi = next
		default:
			if text[0] != c {
				return noMatch
			}
		}
		pi++
		text = text[1:]
	}
	if len(text) > 0 {
		return noMatch
	}
	return matched
}

// star matches pattern[pi:], which starts with one or more `*`, against text.
func star(pattern string, pi int, text string, pathname bool) int {
	first := pi
	for pi < len(pattern) && pattern[pi] == '*' {
		pi++
	}
	// Whether the star may match slashes: always without pathname; with it, only a `**` that stands between
	// slashes or at an end of the pattern.
	crosses := !pathname
	if pathname && pi-first >= 2 && (first == 0 || pattern[first-1] == '/') &&
		(pi == len(pattern) || pattern[pi] == '/' || (pattern[pi] == '\\' && pi+1 < len(pattern) && pattern[pi+1] == '/')) {
		// `**/` may also stand for no directory at all.
		if pi < len(pattern) && pattern[pi] == '/' && match(pattern, pi+1, text, pathname) == matched {
			return matched
		}
		crosses = true
	}
	if pi == len(pattern) {
		// A trailing `**` matches everything; a trailing `*` only what has no more slashes.
		if !crosses && indexByte(text, '/') >= 0 {
			return noMatch
		}
		return matched
	}
	if !crosses && pattern[pi] == '/' {
		// `*/` with pathname: the star takes the rest of this component.
		slash := indexByte(text, '/')
		if slash < 0 {
			return noMatch
		}
		return match(pattern, pi, text[slash:], pathname)
	}
	for len(text) > 0 {
		// Skip ahead when the star is followed by a literal byte: what comes before it belongs to the star.
		if literal := pattern[pi]; !isGlobSpecial(literal) {
			i := 0
			for i < len(text) && (crosses || text[i] != '/') && text[i] != literal {
				i++
			}
			if i == len(text) || text[i] != literal {
				// No later start can find it either: only an enclosing `**` (for a star that stops at slashes)
				// may still move on.
				if crosses {
					return abortAll
				}
				return abortToDoubleStar
			}
			text = text[i:]
		}
		m := match(pattern, pi, text, pathname)
		if m != noMatch {
			if !crosses || m != abortToDoubleStar {
				return m
			}
		} else if !crosses && text[0] == '/' {
			return abortToDoubleStar
		}
		text = text[1:]
	}
	return abortAll
}

// class matches one byte against the bracket expression at pattern[pi] (a `[`). It returns the index of the
// closing `]`, whether the byte is in the set, and abortAll for an unterminated or malformed expression.
func class(pattern string, pi int, b byte) (int, bool, int) {
	pi++
	if pi >= len(pattern) {
		return 0, false, abortAll
	}
	negated := false
	if pattern[pi] == '!' || pattern[pi] == '^' {
		negated = true
		pi++
	}
	in := false
	var prev byte
	hasPrev := false
	first := true
	for {
		if pi >= len(pattern) {
			return 0, false, abortAll
		}
		c := pattern[pi]
		if c == ']' && !first {
			break
		}
		first = false
		switch {
		case c == '\\':
			pi++
			if pi >= len(pattern) {
				return 0, false, abortAll
			}
			c = pattern[pi]
			if b == c {
				in = true
			}
			prev, hasPrev = c, true
		case c == '-' && hasPrev && prev != 0 && pi+1 < len(pattern) && pattern[pi+1] != ']':
			pi++
			hi := pattern[pi]
			if hi == '\\' {
				pi++
				if pi >= len(pattern) {
					return 0, false, abortAll
				}
				hi = pattern[pi]
			}
			if prev <= b && b <= hi {
				in = true
			}
			// A range's end cannot start another range.
			prev, hasPrev = 0, false
		case c == '[' && pi+1 < len(pattern) && pattern[pi+1] == ':':
			end, member, outcome, isClass := posixClass(pattern, pi, b)
			if outcome != matched {
				return 0, false, outcome
			}
			if !isClass {
				// No closing ":]": the `[` is an ordinary member.
				if b == '[' {
					in = true
				}
				prev, hasPrev = '[', true
				break
			}
			if member {
				in = true
			}
			pi = end
			prev, hasPrev = 0, false
		default:
			if b == c {
				in = true
			}
			prev, hasPrev = c, true
		}
		pi++
	}
	return pi, in != negated, matched
}

// posixClass reads `[:name:]` at pattern[pi]. It returns the index of its closing `]`, whether b is a member,
// abortAll for an unknown name or a missing `]`, and isClass false when the text is no class (no `:]`).
func posixClass(pattern string, pi int, b byte) (end int, member bool, outcome int, isClass bool) {
	start := pi + 2
	j := start
	for j < len(pattern) && pattern[j] != ']' {
		j++
	}
	if j >= len(pattern) {
		return 0, false, abortAll, false
	}
	if j-start-1 < 0 || pattern[j-1] != ':' {
		return 0, false, matched, false
	}
	name := pattern[start : j-1]
	test, ok := posixClasses[name]
	if !ok {
		return 0, false, abortAll, false
	}
	return j, test(b), matched, true
}

var posixClasses = map[string]func(byte) bool{
	"alnum":  func(b byte) bool { return isAlpha(b) || isDigit(b) },
	"alpha":  isAlpha,
	"blank":  func(b byte) bool { return b == ' ' || b == '\t' },
	"cntrl":  func(b byte) bool { return b < 0x20 || b == 0x7f },
	"digit":  isDigit,
	"graph":  func(b byte) bool { return b > 0x20 && b < 0x7f },
	"lower":  func(b byte) bool { return 'a' <= b && b <= 'z' },
	"print":  func(b byte) bool { return b >= 0x20 && b < 0x7f },
	"punct":  func(b byte) bool { return b > 0x20 && b < 0x7f && !isAlpha(b) && !isDigit(b) },
	"space":  func(b byte) bool { return b == ' ' || ('\t' <= b && b <= '\r') },
	"upper":  func(b byte) bool { return 'A' <= b && b <= 'Z' },
	"xdigit": func(b byte) bool { return isDigit(b) || ('a' <= b && b <= 'f') || ('A' <= b && b <= 'F') },
}

func isAlpha(b byte) bool { return ('a' <= b && b <= 'z') || ('A' <= b && b <= 'Z') }
func isDigit(b byte) bool { return '0' <= b && b <= '9' }

func indexByte(s string, b byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == b {
			return i
		}
	}
	return -1
}

func isGlobSpecial(b byte) bool { return b == '*' || b == '?' || b == '[' || b == '\\' }
