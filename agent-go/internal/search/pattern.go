package search

import (
	"bytes"
	"errors"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// PatternOptions are the request's pattern flags (spec/semantics.md SF4).
type PatternOptions struct {
	Literal    bool
	IgnoreCase bool
	SmartCase  bool
	WordRegexp bool
}

// Matcher finds matches in lines and candidate lines in blocks of lines.
type Matcher struct {
	// re matches within one line; it is also run over a block of whole lines to find candidates, which is
	// exact because its classes never match a line feed and its anchors are line anchors.
	re *regexp.Regexp
	// fixed, when set, is the whole pattern as a case-sensitive fixed string (bytes.Index is the search).
	fixed []byte
	// required, when set, is a case-sensitive string every match contains: a block without it has no match.
	required []byte
	// anyOf, when set, are strings one of which every match contains (an alternation's); folded: compared with the
	// block's ASCII lowercase (they are lowercase ASCII, without the letters Unicode folds beyond ASCII).
	anyOf  [][]byte
	folded bool
	// word: the wordRegexp wrappers (group 1 is the match); atStart searches a line from its start, inside from
	// where the previous match ended — its left side is a character at or after that point, as ripgrep searches.
	word            bool
	atStart, inside *regexp.Regexp
}

// patternPrefix starts every pattern failure's message, so the message names what is wrong.
const patternPrefix = "pattern: "

// nonWord is a character that is not a word character for wordRegexp (SF4): ripgrep's Unicode word characters —
// letters, marks, decimal and letter numbers, connector punctuation, and the two joiners.
const nonWord = `[^\pL\pM\p{Nd}\p{Nl}\p{Pc}\x{200C}\x{200D}\x{FFFD}]`

// Compile turns the request's pattern into a Matcher, or fails with a message naming the refused construct.
func Compile(pattern string, opts PatternOptions) (*Matcher, error) {
	if !utf8.ValidString(pattern) {
		return nil, errors.New(patternPrefix + "not valid UTF-8")
	}
	fold := opts.IgnoreCase || (opts.SmartCase && !hasUppercase(pattern, opts.Literal))
	source := pattern
	if opts.Literal {
		source = regexp.QuoteMeta(pattern)
	}
	flags := syntax.Perl
	if fold {
		flags |= syntax.FoldCase
	}
	tree, err := syntax.Parse(source, flags)
	if err != nil {
		return nil, explain(err)
	}
	if err := lineOnly(tree); err != nil {
		return nil, err
	}
	m := &Matcher{word: opts.WordRegexp}
	text := tree.String()
	if m.re, err = regexp.Compile(text); err != nil {
		return nil, explain(err)
	}
	if m.word {
		// ripgrep's -w: the match with a non-word character or the line's edge on each side, the sides not
		// reported.
		if m.atStart, err = regexp.Compile(`(?:^|` + nonWord + `)(` + text + `)(?:$|` + nonWord + `)`); err != nil {
			return nil, explain(err)
		}
		if m.inside, err = regexp.Compile(nonWord + `(` + text + `)(?:$|` + nonWord + `)`); err != nil {
			return nil, explain(err)
		}
	}
	if !fold && pattern != "" {
		m.required = requiredLiteral(tree)
		// A pattern that is one literal (`-F`, or a regex without metacharacters: most agent searches) is
		// matched by bytes.Index alone.
		if !m.word && tree.Op == syntax.OpLiteral && m.required != nil {
			m.fixed = m.required
		}
	}
	if m.fixed == nil && m.required == nil {
		m.anyOf, m.folded = requiredSet(tree)
	}
	return m, nil
}

// explain words a parse error as SF4 states, naming the constructs ripgrep refuses too.
func explain(err error) error {
	var perr *syntax.Error
	if errors.As(err, &perr) {
		switch {
		case (perr.Code == syntax.ErrInvalidPerlOp || perr.Code == syntax.ErrInvalidNamedCapture) && (strings.HasPrefix(perr.Expr, "(?=") ||
			strings.HasPrefix(perr.Expr, "(?!") || strings.HasPrefix(perr.Expr, "(?<=") ||
			strings.HasPrefix(perr.Expr, "(?<!")):
			return errors.New(patternPrefix + "look-around is not supported")
		case perr.Code == syntax.ErrInvalidEscape && len(perr.Expr) == 2 && perr.Expr[1] >= '1' && perr.Expr[1] <= '9':
			return errors.New(patternPrefix + "backreferences are not supported")
		}
	}
	return errors.New(patternPrefix + err.Error())
}

var errLineFeed = errors.New(patternPrefix + "a line feed cannot be matched; searches are line by line")

// lineOnly makes the tree match within one line, as ripgrep does: a literal line feed is refused, classes and `.`
// never match it, and text anchors become line anchors. Classes and `.` also lose U+FFFD, which is how RE2 sees a
// byte of invalid UTF-8: ripgrep's never match such a byte (the price: a real U+FFFD character is matched only by
// a literal U+FFFD).
func lineOnly(re *syntax.Regexp) error {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r == '\n' {
				return errLineFeed
			}
		}
	case syntax.OpCharClass:
		re.Rune = without(without(re.Rune, '\n'), utf8.RuneError)
		if len(re.Rune) == 0 {
			re.Op = syntax.OpNoMatch
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		re.Op, re.Rune = syntax.OpCharClass, anyButLineFeed
	case syntax.OpBeginText:
		re.Op = syntax.OpBeginLine
	case syntax.OpEndText:
		re.Op, re.Flags = syntax.OpEndLine, re.Flags&^syntax.WasDollar
	}
	for _, sub := range re.Sub {
		if err := lineOnly(sub); err != nil {
			return err
		}
	}
	return nil
}

// anyButLineFeed is `.`: every character but the line feed and U+FFFD (see lineOnly).
var anyButLineFeed = []rune{0, '\n' - 1, '\n' + 1, utf8.RuneError - 1, utf8.RuneError + 1, unicode.MaxRune}

// without removes r from a class's sorted ranges.
func without(ranges []rune, r rune) []rune {
	out := make([]rune, 0, len(ranges)+2)
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo > r || hi < r {
			out = append(out, lo, hi)
			continue
		}
		if lo < r {
			out = append(out, lo, r-1)
		}
		if hi > r {
			out = append(out, r+1, hi)
		}
	}
	return out
}

// requiredLiteral is the longest case-sensitive string every match of re contains, or nil.
func requiredLiteral(re *syntax.Regexp) []byte {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil
		}
		for _, r := range re.Rune {
			// U+FFFD in the pattern also matches invalid bytes, which bytes.Index would not find.
			if r == utf8.RuneError {
				return nil
			}
		}
		return []byte(string(re.Rune))
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []byte
		for _, sub := range re.Sub {
			if lit := requiredLiteral(sub); len(lit) > len(best) {
				best = lit
			}
		}
		return best
	}
	return nil
}

// maxSet bounds the strings of a prefilter set: beyond, one regex pass is cheaper than that many searches.
const maxSet = 8

// requiredSet is a set of strings one of which every match of re contains, for the prefilter, or nil. folded: the
// strings are matched case-insensitively, and then they are lowercase ASCII without `k` and `s` (which Unicode folds
// to the Kelvin sign and the long s: an ASCII lowercase of the block would miss those).
func requiredSet(re *syntax.Regexp) (set [][]byte, folded bool) {
	switch re.Op {
	case syntax.OpLiteral:
		text := string(re.Rune)
		if re.Flags&syntax.FoldCase == 0 {
			if strings.ContainsRune(text, utf8.RuneError) {
				return nil, false
			}
			return [][]byte{[]byte(text)}, false
		}
		lower := strings.ToLower(text)
		for i := 0; i < len(lower); i++ {
			if lower[i] >= utf8.RuneSelf || lower[i] == 'k' || lower[i] == 's' {
				return nil, false
			}
		}
		return [][]byte{[]byte(lower)}, true
	case syntax.OpCapture, syntax.OpPlus:
		return requiredSet(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredSet(re.Sub[0])
		}
	case syntax.OpAlternate:
		var all [][]byte
		var anyFolded bool
		for _, sub := range re.Sub {
			set, folded := requiredSet(sub)
			if set == nil {
				return nil, false
			}
			all, anyFolded = append(all, set...), anyFolded || folded
		}
		if len(all) > maxSet {
			return nil, false
		}
		if anyFolded {
			// Mixed sets are compared folded: lowercase the case-sensitive ones too (a superset, still exact
			// after the regex verifies the line), unless one cannot be.
			for i, lit := range all {
				lower := bytes.ToLower(lit)
				for _, c := range lower {
					if c >= utf8.RuneSelf || c == 'k' || c == 's' {
						return nil, false
					}
				}
				all[i] = lower
			}
		}
		return all, anyFolded
	case syntax.OpConcat:
		var best [][]byte
		var bestFolded bool
		for _, sub := range re.Sub {
			set, folded := requiredSet(sub)
			if set != nil && (best == nil || shortest(set) > shortest(best)) {
				best, bestFolded = set, folded
			}
		}
		return best, bestFolded
	}
	return nil, false
}

// shortest is the length of a set's shortest string: the longer, the fewer false candidates.
func shortest(set [][]byte) int {
	n := -1
	for _, s := range set {
		if n < 0 || len(s) < n {
			n = len(s)
		}
	}
	return n
}

// hasUppercase tells smartCase whether the pattern has an uppercase letter: any character of a literal pattern,
// a regex's characters outside escapes (`\W`, `\p{Lu}` and `\S` do not count).
func hasUppercase(pattern string, literal bool) bool {
	for i := 0; i < len(pattern); {
		r, size := utf8.DecodeRuneInString(pattern[i:])
		if !literal && r == '\\' {
			i += size + escapeLength(pattern[i+size:])
			continue
		}
		if unicode.IsUpper(r) {
			return true
		}
		i += size
	}
	return false
}

// escapeLength is the length of what follows a backslash: one character, or a braced or hex form.
func escapeLength(rest string) int {
	if rest == "" {
		return 0
	}
	_, size := utf8.DecodeRuneInString(rest)
	switch rest[0] {
	case 'p', 'P', 'x':
		if len(rest) > 1 && rest[1] == '{' {
			if end := strings.IndexByte(rest, '}'); end > 0 {
				return end + 1
			}
		}
		if rest[0] == 'x' {
			return min(len(rest), 3)
		}
		return min(len(rest), 2)
	}
	return size
}

// Span is one submatch: byte offsets in the line's raw bytes.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// lineMatches appends to dst every non-overlapping match in line (no line feed in it), left to right.
func (m *Matcher) lineMatches(line []byte, dst []Span) []Span {
	switch {
	case m.fixed != nil:
		for from := 0; from <= len(line); {
			i := bytes.Index(line[from:], m.fixed)
			if i < 0 {
				break
			}
			dst = append(dst, Span{from + i, from + i + len(m.fixed)})
			from += i + len(m.fixed)
		}
	case m.word:
		for from := 0; from <= len(line); {
			var loc []int
			offset := 0
			if from == 0 {
				loc = m.atStart.FindSubmatchIndex(line)
			} else {
				offset = from
				loc = m.inside.FindSubmatchIndex(line[offset:])
			}
			if loc == nil {
				break
			}
			start, end := offset+loc[2], offset+loc[3]
			dst = append(dst, Span{start, end})
			from = max(end, start+1)
		}
	default:
		for _, loc := range m.re.FindAllIndex(line, -1) {
			dst = append(dst, Span{loc[0], loc[1]})
		}
	}
	return dst
}

// candidate returns the offset in block (whole lines) of a byte that may belong to a matching line, the first
// such line's, or -1 when no line of block matches. lower is block's ASCII lowercase when m.folded (the caller
// lowercases a region once, not once per candidate).
func (m *Matcher) candidate(block, lower []byte) int {
	switch {
	case m.fixed != nil:
		return bytes.Index(block, m.fixed)
	case m.required != nil:
		return bytes.Index(block, m.required)
	case m.anyOf != nil && m.folded:
		return m.firstOf(lower)
	case m.anyOf != nil:
		return m.firstOf(block)
	}
	loc := m.re.FindIndex(block)
	if loc == nil {
		return -1
	}
	return loc[0]
}

// firstOf is the offset of the first string of anyOf in haystack (the block, or its ASCII lowercase when folded),
// or -1.
func (m *Matcher) firstOf(haystack []byte) int {
	first := -1
	for _, lit := range m.anyOf {
		limit := haystack
		if first >= 0 {
			// Only an earlier occurrence matters.
			limit = haystack[:min(len(haystack), first+len(lit))]
		}
		if i := bytes.Index(limit, lit); i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	return first
}

// lowerASCII writes block's ASCII lowercase into dst (grown as needed) and returns it.
func lowerASCII(dst, block []byte) []byte {
	if cap(dst) < len(block) {
		dst = make([]byte, len(block))
	}
	dst = dst[:len(block)]
	for i, c := range block {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst[i] = c
	}
	return dst
}
