package sqlstore

import (
	"fmt"
	"unicode/utf8"
)

// checkUTF8 refuses text that is not valid UTF-8. Text stored inside JSON
// would otherwise come back altered (encoding/json replaces invalid bytes
// with U+FFFD), and the text columns of PostgreSQL and MySQL refuse such
// bytes anyway: an error is better than a silent change.
func checkUTF8(what, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s is not valid UTF-8: %q", what, s)
	}
	return nil
}
