package materialize

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReasonString(t *testing.T) {
	require.Equal(t, "only a single SELECT can be materialized", Reason{Code: CodeUnsupportedQuery, Message: "only a single SELECT can be materialized"}.String())
	require.Equal(t, "variable 'x' is used under OR", Reason{Code: CodeUnderOr, Variable: "x", Message: "is used under OR"}.String())
}

func TestErrors(t *testing.T) {
	var err error = &ValueError{Variable: "x", Detail: "no value"}
	require.ErrorIs(t, err, ErrInvalidValue, "errors.Is(err, ErrInvalidValue) is false")
	require.Equal(t, "materialize: variable 'x': no value", err.Error())
}
