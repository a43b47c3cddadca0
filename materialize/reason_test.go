package materialize

import (
	"errors"
	"testing"
)

func TestReasonString(t *testing.T) {
	if got, want := (Reason{Code: CodeUnsupportedQuery, Message: "only a single SELECT can be materialized"}.String()), "only a single SELECT can be materialized"; got != want {
		t.Fatalf("got = %q, want %q", got, want)
	}
	if got, want := (Reason{Code: CodeUnderOr, Variable: "x", Message: "is used under OR"}.String()), "variable 'x' is used under OR"; got != want {
		t.Fatalf("got = %q, want %q", got, want)
	}
}

func TestErrors(t *testing.T) {
	var err error = &ValueError{Variable: "x", Detail: "no value"}
	if !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("errors.Is(err, ErrInvalidValue) is false")
	}
	if got, want := err.Error(), "materialize: variable 'x': no value"; got != want {
		t.Fatalf("err.Error() = %q, want %q", got, want)
	}
}
