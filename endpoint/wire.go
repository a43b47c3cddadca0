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
	"github.com/endpointkit/endpointkit/sql/engine"
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

// MarshalJSON writes a KindSQL query as
// {"kind": "HogQLQuery", "query": ..., "variables": {...}} and an insight
// query as the raw object it was read from.
func (q Query) MarshalJSON() ([]byte, error) {
	if q.Kind == KindSQL {
		w := sqlWire{Kind: q.Kind, Query: q.SQL}
		if len(q.Variables) > 0 {
			w.Variables = make(map[string]refWire, len(q.Variables))
			for id, ref := range q.Variables {
				w.Variables[id] = refWire(ref)
			}
		}
		// SQL is full of < and >; HTML escaping would show them as \u003c
		// and \u003e to every API client.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(w); err != nil {
			return nil, err
		}
		return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
	}
	if len(q.Insight) > 0 {
		if !json.Valid(q.Insight) {
			return nil, fmt.Errorf("endpoint: query of kind %q holds invalid JSON", q.Kind)
		}
		return append([]byte(nil), q.Insight...), nil
	}
	return json.Marshal(struct {
		Kind string `json:"kind"`
	}{q.Kind})
}

// sqlWire is the JSON shape of a KindSQL query.
type sqlWire struct {
	Kind      string             `json:"kind"`
	Query     string             `json:"query"`
	Variables map[string]refWire `json:"variables,omitempty"`
}

// refWire is the JSON shape of a VariableRef.
type refWire struct {
	VariableID string          `json:"variableId"`
	CodeName   string          `json:"code_name"`
	Value      json.RawMessage `json:"value,omitempty"`
}

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

// Seconds is a period that JSON writes as a whole number of seconds, such
// as driver.Endpoint.MaterializationFreshness on the wire. It reads a
// number of seconds or a Go duration string ("90m", "1h").
type Seconds time.Duration

// MarshalJSON writes whole seconds.
func (s Seconds) MarshalJSON() ([]byte, error) {
	return strconv.AppendInt(nil, int64(time.Duration(s)/time.Second), 10), nil
}

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

// Endpoint is a named, saved query of a project as the Service shows it:
// the stored driver.Endpoint, its settings as they apply (0 replaced by
// the defaults) and the view of its materialization. Its JSON is the
// endpoint object of the HTTP API.
type Endpoint struct {
	ID             string     `json:"id"`
	Name           string     `json:"name"`
	Description    string     `json:"description"`
	Query          Query      `json:"query"`
	IsActive       bool       `json:"is_active"`
	IsMaterialized bool       `json:"is_materialized"`
	CurrentVersion int        `json:"current_version"`
	VersionsCount  int        `json:"versions_count"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
	LastExecutedAt *time.Time `json:"last_executed_at"`
	// DeletedAt is when the endpoint was soft-deleted (SoftDelete); it
	// shows only in the answer of the delete itself.
	DeletedAt *time.Time `json:"deleted_at,omitempty"`
	// DataFreshnessSeconds is how old the data of an answer may be: a
	// cached answer serves while its data is younger, and the stored table
	// of a materialized endpoint is rebuilt at this period. It is one of
	// DataFreshnessValues().
	DataFreshnessSeconds int `json:"data_freshness_seconds"`
	// MaterializationFreshness is how old the stored table of a
	// materialized endpoint may get before runs go inline and it is
	// rebuilt (see driver.Endpoint).
	MaterializationFreshness Seconds `json:"materialization_freshness"`
	// MaterializationBuckets, MaterializationTailColumn and
	// OptionalBreakdowns are the materialization settings (see
	// driver.Endpoint).
	MaterializationBuckets    map[string]engine.Bucket `json:"materialization_buckets,omitempty"`
	MaterializationTailColumn string                   `json:"materialization_tail_column,omitempty"`
	OptionalBreakdowns        []string                 `json:"optional_breakdown_properties,omitempty"`
	// Materialization is the view of the endpoint's materialization.
	Materialization Materialization `json:"materialization"`
	// CheckWarning, in the answer of a create or update only, says that
	// the engine failed on a value while checking the saved query (see
	// SaveCheckEvent): the query was saved unchecked.
	CheckWarning string `json:"check_warning,omitempty"`
}

// Materialization is an endpoint's materialization as API users see it (the
// "materialization" object of the endpoint JSON). The Service computes it
// from the stored MaterializationState and the analysis of the current
// version; stores do not keep it.
type Materialization struct {
	// CanMaterialize and Reason are the verdict on the current version:
	// Reason says why it cannot be materialized (empty when it can).
	CanMaterialize bool   `json:"can_materialize"`
	Reason         string `json:"reason"`
	// Status is empty for an endpoint that is not materialized.
	Status MaterializationStatus `json:"status,omitempty"`
	// LastMaterializedAt is when the stored table that serves the current
	// version and settings was built; nil when there is none.
	LastMaterializedAt *time.Time `json:"last_materialized_at"`
	// Error says why the latest refresh failed, without engine internals.
	Error string `json:"error"`
	// ReadError says why the latest read of the stored table that serves
	// now failed on the database (the run then went inline), and
	// ReadFailedAt when; empty and nil when no read of it failed.
	ReadError    string     `json:"read_error,omitempty"`
	ReadFailedAt *time.Time `json:"read_failed_at,omitempty"`
	// Hibernating tells that no run read the materialization for the
	// Service's HibernateAfter: it is not refreshed until a run wakes it.
	Hibernating bool `json:"hibernating"`
	// Variables say, per variable of a SQL endpoint, how the stored table
	// answers it or why it cannot.
	Variables []VariableVerdict `json:"variables,omitempty"`
}

// VariableVerdict says how the stored table of a SQL endpoint answers one
// of its variables, or why it cannot.
type VariableVerdict struct {
	// CodeName is the variable's code name.
	CodeName string `json:"code_name"`
	// As is materialize.Kind's value: "key" (compared with = to a column or
	// a row expression, stored as a key), "list" (expr IN a multi-valued
	// list), "range" (>=, >, <, <=), "match" (!=, NOT IN, [NOT] LIKE,
	// [NOT] ILIKE on a stored key, applied to it at read), "read" (in the
	// SELECT list or HAVING, bound in the read); empty when it cannot be
	// materialized.
	As string `json:"as,omitempty"`
	// Expression is the column or row expression the variable is
	// compared with, as the analysis prints it.
	Expression string `json:"expression,omitempty"`
	// Bucket is the time bucket a Date range is stored by (minute, hour,
	// day, week, month); empty when the values are stored as they are.
	Bucket string `json:"bucket,omitempty"`
	// Code and Reason say why the variable cannot be materialized: Code is
	// materialize.Code's stable value, Reason for people.
	Code   string `json:"code,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// RunLogEntry is one run as Service.Logs shows it: the log's record
// (driver.RunLogEntry, which holds nothing of the API) with the API's JSON;
// what ran, how long it took and what it cost, how it ended, and by which
// credential. It never holds the run's variable values, nor a token.
type RunLogEntry struct {
	// ExecutionID is the run's execution_id.
	ExecutionID string `json:"execution_id"`
	// At is when the run started.
	At      time.Time `json:"at"`
	Version int       `json:"version"`
	// DurationMS is the whole run, as the Service saw it.
	DurationMS float64 `json:"duration_ms"`
	// Rows is how many rows (SQL) or series (insight) the answer held; nil
	// for a failed run.
	Rows *int `json:"rows"`
	// RowsRead and BytesRead are what the engine reported reading, nil
	// when it reports nothing (see Statistics).
	RowsRead  *int64 `json:"rows_read"`
	BytesRead *int64 `json:"bytes_read"`
	// Status is the HTTP status of the run's answer, 200 for success, and
	// ErrorCode the code of its error.
	Status    int    `json:"status"`
	ErrorCode string `json:"error_code,omitempty"`
	// Refresh is the refresh mode asked for; Cached tells that no query
	// ran (a cached or shared answer); Materialized that the answer came
	// from the stored table.
	Refresh      string `json:"refresh"`
	Cached       bool   `json:"is_cached"`
	Materialized bool   `json:"endpoint_materialized"`
	// Token tells that the run came with an embed token, and TokenKeyID
	// is that token's kid.
	Token      bool   `json:"token"`
	TokenKeyID string `json:"token_kid,omitempty"`
	// KeyID is the id of the stored API key (apikey.Keys) the run was
	// authenticated with; never the key.
	KeyID string `json:"key_id,omitempty"`
}

func runLogEntryOf(e driver.RunLogEntry) RunLogEntry {
	return RunLogEntry{
		ExecutionID: e.ExecutionID, At: e.At, Version: e.Version, DurationMS: e.DurationMS,
		Rows: e.Rows, RowsRead: e.RowsRead, BytesRead: e.BytesRead, Status: e.Status, ErrorCode: e.ErrorCode,
		Refresh: e.Refresh, Cached: e.Cached, Materialized: e.Materialized, Token: e.Token, TokenKeyID: e.TokenKeyID,
		KeyID: e.KeyID,
	}
}
