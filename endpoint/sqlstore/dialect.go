package sqlstore

import (
	"strconv"
	"strings"

	"github.com/endpointkit/endpointkit/endpoint/engine"
)

// rebind rewrites the '?' markers of q into the dialect's marker style. The
// store's statements are fixed text written here, with no '?' inside
// literals, so a plain scan is exact; user values never pass through it.
func rebind(d engine.Engine, q string) string {
	if d != engine.PostgreSQL {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] != '?' {
			b.WriteByte(q[i])
			continue
		}
		n++
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(n))
	}
	return b.String()
}

// textType is the column type of unbounded text. MySQL's TEXT stops at
// 64 KiB, too small for a long query, so it gets MEDIUMTEXT (16 MiB); the
// other engines' TEXT has no practical limit.
func textType(d engine.Engine) string {
	if d == engine.MySQL {
		return "MEDIUMTEXT"
	}
	return "TEXT"
}

// supported reports whether the store has statements for d.
func supported(d engine.Engine) bool {
	return d == engine.SQLite || d == engine.PostgreSQL || d == engine.MySQL
}
