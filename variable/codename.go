package variable

import (
	"regexp"
	"strings"
	"unicode"
)

// codeNamePattern is what may follow "variables." in a placeholder. It is the
// identifier syntax of every supported SQL engine, so a code name can also
// become a column alias when an endpoint is materialized.
var codeNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ReservedPrefix starts the code names of the placeholders the library
// binds itself (the tenant of a scoped query, __endpointkit_tenant): no
// variable may take such a code name, in any mix of case.
const ReservedPrefix = "__endpointkit"

// Reserved reports whether the code name s starts with ReservedPrefix,
// ignoring the case of ASCII letters.
func Reserved(s string) bool {
	return len(s) >= len(ReservedPrefix) && strings.EqualFold(s[:len(ReservedPrefix)], ReservedPrefix)
}

// ValidCodeName reports whether s matches ^[A-Za-z_][A-Za-z0-9_]*$.
func ValidCodeName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// CodeNameFrom derives a code name from a human-readable name the way the
// editor does: lower-case, every run of characters other than ASCII letters
// and digits becomes a single "_", and leading and trailing "_" are trimmed.
// A result that would start with a digit gets a "_" prefix so that it stays a
// valid identifier. It returns "" when name holds no ASCII letter or digit;
// Normalize reports that as an error.
func CodeNameFrom(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	pendingSep := false
	for _, r := range name {
		r = unicode.ToLower(r)
		if ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') {
			if pendingSep && b.Len() > 0 {
				b.WriteByte('_')
			}
			pendingSep = false
			b.WriteRune(r)
			continue
		}
		pendingSep = true
	}
	s := b.String()
	if s != "" && !ValidCodeName(s) {
		s = "_" + s
	}
	return s
}
