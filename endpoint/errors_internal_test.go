package endpoint

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/apierror"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewError(t *testing.T) {
	for _, tc := range []struct {
		sentinel error
		status   int
	}{
		{ErrInvalid, http.StatusBadRequest},
		{ErrNotFound, http.StatusNotFound},
		{ErrConflict, http.StatusConflict},
		{ErrUnauthorized, http.StatusUnauthorized},
		{ErrForbidden, http.StatusForbidden},
		{ErrExecution, http.StatusBadGateway},
		{ErrTimeout, http.StatusGatewayTimeout},
		{errors.New("other"), http.StatusInternalServerError},
	} {
		e := NewError(tc.sentinel, "c", "a", "d")
		if e.Status != tc.status || e.Code != "c" || e.Attr != "a" || e.Error() != "d" || !errors.Is(e, tc.sentinel) {
			t.Errorf("NewError(%v) = %#v", tc.sentinel, e)
		}
	}
}

func TestWithCause(t *testing.T) {
	cause := fmt.Errorf("driver: %w", context.DeadlineExceeded)
	e := withCause(NewError(ErrTimeout, CodeTimeout, "", "query timed out"), cause)
	if e.Error() != "query timed out" || !errors.Is(e, ErrTimeout) || !errors.Is(e, context.DeadlineExceeded) {
		t.Fatalf("withCause: %#v", e)
	}
}

func TestStoreError(t *testing.T) {
	nf := func() *Error { return notFoundf("gone") }
	own := NewError(ErrConflict, CodeConflict, "", "mine")
	for _, tc := range []struct {
		name   string
		err    error
		nf     func() *Error
		status int
		detail string
	}{
		{"not found", fmt.Errorf("x: %w", ErrNotFound), nf, 404, "gone"},
		{"not found without wording", ErrNotFound, nil, 502, "storage failed"},
		{"an *Error passes", fmt.Errorf("wrapped: %w", own), nil, 409, "mine"},
		{"deadline", fmt.Errorf("db: %w", context.DeadlineExceeded), nil, 504, "storage timed out"},
		{"backend failure", errors.New("disk on fire at /var/lib/db"), nil, 502, "storage failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e *Error
			if !errors.As(storeError(tc.err, tc.nf), &e) || e.Status != tc.status || e.Detail != tc.detail {
				t.Fatalf("storeError = %#v, want %d %q", e, tc.status, tc.detail)
			}
		})
	}
	require.NoError(t, storeError(nil, nil), "storeError(nil) != nil")
}

func TestStatusOfDecidesOnce(t *testing.T) {
	cases := []struct {
		err  error
		want int
	}{
		{NewError(ErrInvalid, CodeInvalidInput, "", "x"), 400},
		{&Error{Err: ErrTimeout}, 504},
		{&Error{Status: 429, Err: ErrInvalid}, 429},
		{fmt.Errorf("wrapped: %w", ErrNotFound), 404},
		{ErrExecution, 502},
		{errors.New("anything else"), 500},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, StatusOf(c.err), "StatusOf(%v)", c.err)
	}
}

func TestCutBoundsEcho(t *testing.T) {
	long := strings.Repeat("é", 500)
	got := cut(long)
	n := utf8.RuneCountInString(got)
	require.Equal(t, int(maxEcho+3), n, "cut kept %d characters, want %d and an ellipsis", n, maxEcho)
	require.True(t, utf8.ValidString(got), "cut split a character")
	require.Equal(t, "short", cut("short"), "cut changed short input")
}

// A refused value arrives with typed fields, so no caller parses Detail.
func TestValueErrorFields(t *testing.T) {
	v := &variable.Variable{CodeName: "amount", Type: variable.Number}
	_, err := v.Coerce(strings.Repeat("9x", 400), time.Now())
	require.Error(t, err, "Coerce accepted text as a Number")
	e := valueError(v, err)
	if e.Variable != "amount" || e.Type != "Number" || e.Code != CodeInvalidVariableValue {
		t.Fatalf("fields = %q %q %q", e.Variable, e.Type, e.Code)
	}
	require.NotEqual(t, "", e.Value, "Value = %d characters; want the value, cut", utf8.RuneCountInString(e.Value))
	require.LessOrEqual(t, utf8.RuneCountInString(e.Value), int(maxEcho+10), "Value = %d characters; want the value, cut", utf8.RuneCountInString(e.Value))
	require.True(t, strings.HasPrefix(e.Detail, "Invalid value for variable 'amount': expected Number, got "), "Detail = %q", e.Detail)
	require.Equal(t, 400, StatusOf(e), "status")
}

// TestDriverCodes checks that the codes the JSON decoding of driver
// records gives are the Code constants of this package.
func TestDriverCodes(t *testing.T) {
	if apierror.CodeInvalidInput != CodeInvalidInput || apierror.CodeUnsupportedQuery != CodeUnsupportedQuery {
		t.Fatalf("apierror codes %q, %q differ from endpoint's %q, %q", apierror.CodeInvalidInput, apierror.CodeUnsupportedQuery, CodeInvalidInput, CodeUnsupportedQuery)
	}
	if apierror.MaxEcho != maxEcho || apierror.ErrInvalid != ErrInvalid {
		t.Fatal("apierror's MaxEcho or ErrInvalid is not endpoint's")
	}
}

// TestQueryFaultHidesInternals: an engine message that names the
// library's tables or the tenant scope's variable is not shown; the run
// stays a 502.
func TestQueryFaultHidesInternals(t *testing.T) {
	for msg, shown := range map[string]bool{
		"no such column: nope":                           true,
		"no such table: endpointkit_mat_0a1b_v1":         false,
		`relation "ENDPOINTKIT_versions" does not exist`: false,
		"unknown identifier __endpointkit_tenant":        false,
		"": false,
	} {
		err := &driver.QueryError{Message: msg, Err: errors.New("driver")}
		if got := queryFault(err); (got != nil) != shown {
			t.Errorf("%q: shown %v; want %v", msg, got != nil, shown)
		} else if got != nil && (got.Status != 400 || got.Code != CodeQueryError || got.Detail != "The database refused the query: "+msg) {
			t.Errorf("%q: {%d %s %q}", msg, got.Status, got.Code, got.Detail)
		}
	}
	if assert.Nil(t, queryFault(errors.New("connection refused")), "an error of the database is not the query's") {
		assert.Nil(t, queryFault(nil), "an error of the database is not the query's")
	}
}
