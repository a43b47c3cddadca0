package variable

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNormalizeRefusesWhatNoStoreHolds: a name with a NUL character, which
// PostgreSQL cannot store in text, and a code name longer than the stores'
// key column (MaxCodeNameLength bytes, VARCHAR(255) on PostgreSQL and
// MySQL), given or derived from a long name, were accepted by Normalize and
// failed in the store: a 502 "storage failed" for a client's bad input.
func TestNormalizeRefusesWhatNoStoreHolds(t *testing.T) {
	long := strings.Repeat("c", MaxCodeNameLength+1)
	for _, tc := range []struct {
		name    string
		in      Variable
		field   string
		message string
	}{
		{"name with a NUL", Variable{ID: testID, Name: "a\x00b", Type: String}, "name",
			`the text holds a NUL character (\u0000), which databases cannot store in text`},
		{"name not UTF-8", Variable{ID: testID, Name: "a\xff", Type: String}, "name", `the text is not valid UTF-8`},
		{"long code_name", Variable{ID: testID, Name: "x", CodeName: long, Type: String}, "code_name",
			`is 256 bytes long; a code name has at most 255`},
		{"long name, code_name derived", Variable{ID: testID, Name: long, Type: String}, "code_name",
			`derived from the name is 256 bytes long; a code name has at most 255: give a shorter one`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.in
			err := v.Normalize()
			var de *DefinitionError
			require.True(t, errors.As(err, &de), "Normalize() = %v, want a *DefinitionError", err)
			assert.Equal(t, tc.field, de.Field)
			assert.Equal(t, tc.message, de.Message)
		})
	}
	v := Variable{ID: testID, Name: "x", CodeName: strings.Repeat("c", MaxCodeNameLength), Type: String}
	assert.NoError(t, v.Normalize(), "a code name of MaxCodeNameLength bytes")
}
