package placeholder

import (
	"github.com/stretchr/testify/assert"
	"strings"
	"testing"
	"unicode/utf8"
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
	assert.ErrorIs(t, err, ErrSyntax, "errors.Is(err, ErrSyntax) is false")
	assert.NotErrorIs(t, err, ErrMissingValue, "errors.Is(err, ErrMissingValue) is true")
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
		got, want := tt.err.Error(), tt.want
		assert.Equal(t, want, got, "tt.err.Error()")
		assert.ErrorIs(t, tt.err, tt.err.Err, "errors.Is(tt.err, tt.err.Err) is false")
		assert.NotErrorIs(t, tt.err, ErrSyntax, "errors.Is(tt.err, ErrSyntax) is true")
	}
}
