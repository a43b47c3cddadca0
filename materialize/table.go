package materialize

import (
	"strconv"
	"strings"
)

// TableName returns the name of the stored table of one version of an
// endpoint: "endpointkit_mat_" followed by the endpoint id reduced to
// lower-case letters, digits and underscores (at most 32 of them: all the
// hex digits of a UUID), and
// "_v<version>". It is short enough for every engine's identifier limit,
// with room for Refresh's "_next" suffix. Ids that differ only in other
// characters share a name, so pass an id (a UUID), not a display name.
func TableName(endpointID string, version int) string {
	var b strings.Builder
	b.WriteString("endpointkit_mat_")
	n := 0
	for _, r := range strings.ToLower(endpointID) {
		if n == 32 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			n++
		case r == '_':
			b.WriteByte('_')
			n++
		}
	}
	b.WriteString("_v")
	b.WriteString(strconv.Itoa(version))
	return b.String()
}
