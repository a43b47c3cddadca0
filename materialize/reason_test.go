package materialize

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReasonString(t *testing.T) {
	require.Equal(t, "only a single SELECT can be materialized", Reason{Code: CodeUnsupportedQuery, Message: "only a single SELECT can be materialized"}.String())
	require.Equal(t, "variable 'x' is used under OR", Reason{Code: CodeUnderOr, Variable: "x", Message: "is used under OR"}.String())
}

func TestErrors(t *testing.T) {
	var err error = &InlineError{Variable: "from", Detail: "2025-05-01T10:00:00Z is not the start of a day"}
	require.True(t, errors.Is(err, ErrRunInline))
	require.False(t, errors.Is(err, ErrInvalidValue))
	require.Equal(t, "materialize: variable 'from': 2025-05-01T10:00:00Z is not the start of a day; run inline instead", err.Error())
	err = &ValueError{Variable: "x", Detail: "no value"}
	require.True(t, errors.Is(err, ErrInvalidValue))
	require.Equal(t, "materialize: variable 'x': no value", err.Error())
}
