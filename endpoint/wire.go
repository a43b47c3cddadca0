package endpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/apierror"
)

// The wire types of the records: the JSON a host's API reads, decoded here
// with the API's errors (an *Error of status 400 naming the field), so that
// package driver holds the records stores keep and nothing of the API.

// Query is an endpoint's query as it travels on the wire:
// PostHog-compatible JSON whose "kind" (KindSQL, KindTrends,
// KindRetention, KindLifecycle) says which fields apply. It is the stored
// driver.Query with the API's JSON decoding, which refuses bad input with
// an *Error of status 400.
type Query driver.Query

// MarshalJSON writes q as driver.Query does.
func (q Query) MarshalJSON() ([]byte, error) { return driver.Query(q).MarshalJSON() }

// UnmarshalJSON reads a query by its "kind". A HogQLQuery must hold a
// "query" string and may hold "variables"; other keys are refused rather
// than ignored, because a filter that is silently dropped returns more data
// than its author meant. TrendsQuery, RetentionQuery and LifecycleQuery are kept whole in
// Insight for the insight package to decode. Every error is an *Error with
// status 400 and attr "query", so that an API can answer it as it is.
func (q *Query) UnmarshalJSON(data []byte) error {
	var head map[string]json.RawMessage
	if err := json.Unmarshal(data, &head); err != nil || head == nil {
		return apierror.Invalidf(apierror.CodeInvalidInput, "query", "Query must be a JSON object with a \"kind\".")
	}
	rawKind, ok := head["kind"]
	if !ok {
		return apierror.Invalidf(apierror.CodeInvalidInput, "query", "Query \"kind\" is required (one of %s, %s, %s, %s).", KindSQL, KindTrends, KindRetention, KindLifecycle)
	}
	var kind string
	if err := json.Unmarshal(rawKind, &kind); err != nil {
		return apierror.Invalidf(apierror.CodeInvalidInput, "query", "Query \"kind\" must be a string.")
	}
	switch kind {
	case KindSQL:
		return q.unmarshalSQL(data, head)
	case KindTrends, KindRetention, KindLifecycle:
		var buf bytes.Buffer
		if err := json.Compact(&buf, data); err != nil {
			return apierror.Invalidf(apierror.CodeInvalidInput, "query", "Query is not valid JSON.")
		}
		*q = Query{Kind: kind, Insight: buf.Bytes()}
		return nil
	default:
		return apierror.UnsupportedKind(kind, KindSQL, KindTrends, KindRetention, KindLifecycle)
	}
}

func (q *Query) unmarshalSQL(data []byte, head map[string]json.RawMessage) error {
	if err := onlyKeys(head, "kind", "query", "variables"); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var w struct {
		Kind      string                     `json:"kind"`
		Query     *string                    `json:"query"`
		Variables map[string]json.RawMessage `json:"variables"`
	}
	if err := dec.Decode(&w); err != nil {
		return sqlDecodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return apierror.Invalidf(apierror.CodeInvalidInput, "query", "Query must be a single JSON object.")
	}
	if w.Query == nil {
		return apierror.Required("query.query")
	}
	out := Query{Kind: KindSQL, SQL: *w.Query}
	if len(w.Variables) > 0 {
		out.Variables = make(map[string]driver.VariableRef, len(w.Variables))
	}
	for key, raw := range w.Variables {
		ref, err := unmarshalRef(raw)
		if err != nil {
			return apierror.Invalidf(apierror.CodeInvalidInput, "query.variables", "Query variable %q: %s", key, err)
		}
		out.Variables[key] = ref
	}
	*q = out
	return nil
}

// unmarshalRef reads {"variableId", "code_name", "value"}; the editor may
// add other keys of its own, which do not change what runs and are dropped.
func unmarshalRef(raw json.RawMessage) (driver.VariableRef, error) {
	var w struct {
		VariableID *string         `json:"variableId"`
		CodeName   *string         `json:"code_name"`
		Value      json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return driver.VariableRef{}, fmt.Errorf("%q must be a string", te.Field)
		}
		return driver.VariableRef{}, errors.New("must be an object with \"variableId\" and \"code_name\"")
	}
	var ref driver.VariableRef
	if w.VariableID != nil {
		ref.VariableID = *w.VariableID
	}
	if w.CodeName != nil {
		ref.CodeName = *w.CodeName
	}
	if len(w.Value) > 0 && string(w.Value) != "null" {
		v, err := decodeTestValue(w.Value)
		if err != nil {
			return driver.VariableRef{}, errors.New("\"value\" is not valid JSON")
		}
		// Kept as the JSON text encoding/json writes for the decoded
		// value (compact, keys sorted, < and > unescaped), so that the
		// query's JSON reads back byte for byte.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return driver.VariableRef{}, errors.New("\"value\" is not valid JSON")
		}
		ref.Value = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	}
	return ref, nil
}

// decodeTestValue decodes the JSON text of a test value. Numbers stay
// json.Number, as in a run's variables, so that a test value is coerced
// exactly as a run's value would be.
func decodeTestValue(text json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

// sqlDecodeError words a decoding failure of a HogQLQuery for its author.
func sqlDecodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := "query"
		if te.Field != "" {
			field = "query." + te.Field
		}
		want := map[string]string{"kind": "a string", "query": "a string", "variables": "an object keyed by variable id"}[te.Field]
		if want == "" {
			want = te.Type.String()
		}
		return apierror.Invalidf(apierror.CodeInvalidInput, field, "Query field %q has the wrong type: expected %s.", te.Field, want)
	}
	return apierror.Invalidf(apierror.CodeInvalidInput, "query", "Query is not valid JSON.")
}

// onlyKeys refuses a key of a HogQLQuery other than allowed, naming the
// first in sorted order.
func onlyKeys(head map[string]json.RawMessage, allowed ...string) error {
	var unknown []string
	for k := range head {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return apierror.Invalidf(apierror.CodeInvalidInput, "query", "Query has an unknown field %s; a %s holds only \"kind\", \"query\" and \"variables\".", strconv.Quote(apierror.Cut(unknown[0])), KindSQL)
}

// Seconds is a period that JSON writes as a whole number of seconds
// (driver.Seconds). It reads a number of seconds or a Go duration string
// ("90m", "1h").
type Seconds driver.Seconds

// MarshalJSON writes whole seconds.
func (s Seconds) MarshalJSON() ([]byte, error) { return driver.Seconds(s).MarshalJSON() }

// UnmarshalJSON reads a positive whole number of seconds, or a Go duration
// string of at least a second; anything else is a 400 naming the field.
func (s *Seconds) UnmarshalJSON(data []byte) error {
	bad := func() error {
		return apierror.Invalidf(apierror.CodeInvalidInput, "materialization_freshness",
			"Invalid materialization_freshness %s: expected a whole number of seconds (at least 1) or a duration such as \"1h30m\".", truncate(string(data), 40))
	}
	data = bytes.TrimSpace(data)
	if string(data) == "null" {
		return nil // as encoding/json does for a missing value
	}
	if len(data) > 0 && data[0] == '"' {
		var text string
		if err := json.Unmarshal(data, &text); err != nil {
			return bad()
		}
		d, err := time.ParseDuration(text)
		if err != nil || d < time.Second || d%time.Second != 0 {
			return bad()
		}
		*s = Seconds(d)
		return nil
	}
	n, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil || n < 1 || n > int64(1<<62/time.Second) {
		return bad()
	}
	*s = Seconds(time.Duration(n) * time.Second)
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
