package placeholder

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

// recount is the obvious, slow way to locate an offset.
func recount(s string, off int) (line, col int) {
	before := s[:off]
	line = strings.Count(before, "\n") + 1
	col = utf8.RuneCountInString(before[strings.LastIndexByte(before, '\n')+1:]) + 1
	return line, col
}

func TestSyntaxErrorText(t *testing.T) {
	err := error(&SyntaxError{Line: 3, Column: 7, Offset: 40, Msg: "missing code name"})
	assert.Equal(t, "placeholder: line 3, column 7: missing code name", err.Error())
	assert.True(t, errors.Is(err, ErrSyntax))
	assert.False(t, errors.Is(err, ErrMissingValue))
}

func TestVariableErrorText(t *testing.T) {
	tests := []struct {
		err  *VariableError
		want string
	}{
		{&VariableError{Name: "x", Line: 2, Column: 5, Err: ErrMissingValue},
			`placeholder: variable "x" at line 2, column 5: missing value`},
		{&VariableError{Name: "d", Line: 1, Column: 1, Err: ErrUnsupportedValue, Detail: "got Go type []int"},
			`placeholder: variable "d" at line 1, column 1: unsupported value type: got Go type []int`},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.err.Error())
		assert.True(t, errors.Is(tt.err, tt.err.Err))
		assert.False(t, errors.Is(tt.err, ErrSyntax))
	}
}
