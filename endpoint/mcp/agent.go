package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/openapi"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/variable"
)

// queryToolDescription and queryToolSchema describe _run_query: SQL with
// its variables by code name, or an insight query.
const queryToolDescription = "Runs a query that is not saved, within the project's access policy: sql with {variables.<code_name>} placeholders " +
	"and variables by code name (a value, or {\"value\": ..., \"type\": \"Date\"}), or an insight query " +
	"(TrendsQuery, RetentionQuery, LifecycleQuery). Nothing is saved. Answers the rows and whether it could be materialized."

func queryToolSchema() map[string]any {
	value := map[string]any{"description": "A value, or {\"value\": ..., \"type\": \"String|Number|Boolean|Date|List\"}."}
	return map[string]any{"type": "object", "additionalProperties": false,
		"properties": map[string]any{
			"sql":       map[string]any{"type": "string", "description": "The SQL, with {variables.<code_name>} placeholders."},
			"variables": map[string]any{"type": "object", "description": "Values by code name (sql), or by name (an insight query).", "additionalProperties": value},
			"query":     map[string]any{"type": "object", "description": "An insight query, as the body of POST query/ takes it.", "required": []any{"kind"}},
			"limit":     map[string]any{"type": "integer", "minimum": 0},
			"offset":    map[string]any{"type": "integer", "minimum": 0},
			"debug":     map[string]any{"type": "boolean"},
		}}
}

// queryTool runs _run_query: SQL with its variables by code name
// (Service.RunAdHoc), or a query as POST query/ takes it.
func (t *tools) queryTool(ctx context.Context, args json.RawMessage) (any, error) {
	var probe struct {
		SQL *string `json:"sql"`
	}
	_ = json.Unmarshal(args, &probe)
	if probe.SQL == nil {
		return t.query(ctx, args)
	}
	var req struct {
		SQL       string                     `json:"sql"`
		Variables map[string]json.RawMessage `json:"variables"`
		Query     json.RawMessage            `json:"query"`
		Limit     *int                       `json:"limit"`
		Offset    *int                       `json:"offset"`
		Debug     bool                       `json:"debug"`
	}
	if err := decode(args, &req); err != nil {
		return nil, err
	}
	if len(req.Query) > 0 {
		return nil, endpoint.NewError(endpoint.ErrInvalid, endpoint.CodeInvalidInput, "query", "Give sql or query, not both.")
	}
	run := endpoint.AdHocRequest{SQL: req.SQL, Limit: req.Limit, Offset: req.Offset, Debug: req.Debug, Variables: map[string]endpoint.AdHocVariable{}}
	for code, raw := range req.Variables {
		v, err := adHocValue(code, raw)
		if err != nil {
			return nil, err
		}
		run.Variables[code] = v
	}
	// The one admission: who (a token may not query), what (query:run),
	// which budget (the key's inline one and the project's slot).
	adm, err := t.svc.Admit(ctx, t.budgets(), t.who(), endpoint.Ask{Act: endpoint.ActQuery})
	if err != nil {
		return nil, err
	}
	defer adm.Release()
	return t.svc.RunAdHoc(ctx, t.caller.project, run)
}

// adHocValue reads the value of variable code: a value, or an object
// {"value": ..., "type": ...}.
func adHocValue(code string, raw json.RawMessage) (endpoint.AdHocVariable, error) {
	var typed struct {
		Value json.RawMessage `json:"value"`
		Type  string          `json:"type"`
	}
	bad := func() error {
		return endpoint.NewError(endpoint.ErrInvalid, endpoint.CodeInvalidInput, "variables."+code,
			fmt.Sprintf("Variable '%s' takes a value, or {\"value\": ..., \"type\": \"Date\"}.", clip(code)))
	}
	trimmed := strings.TrimSpace(string(raw))
	if strings.HasPrefix(trimmed, "{") {
		if err := decode(raw, &typed); err != nil || len(typed.Value) == 0 {
			return endpoint.AdHocVariable{}, bad()
		}
		raw = typed.Value
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return endpoint.AdHocVariable{}, bad()
	}
	return endpoint.AdHocVariable{Value: v, Type: variable.Type(typed.Type)}, nil
}

// toolSchema is the input schema of e's tool: the run request, short.
// An argument that takes one value only is left out (format: a tool
// answers JSON; version: a tool runs the current one), the run options
// are described in a few words, and a Date variable's forms are in its
// description only (the patterns that repeat them are left to the HTTP
// API's OpenAPI document).
func (t *tools) toolSchema(rs endpoint.RunSchema) map[string]any {
	s := openapi.RequestSchema(rs, openapi.Options{Fixed: t.fixedNames()})
	props, ok := s["properties"].(map[string]any)
	if !ok {
		return s
	}
	for name, p := range props {
		if m, ok := p.(map[string]any); ok {
			if enum, ok := m["enum"].([]any); ok && len(enum) <= 1 {
				delete(props, name)
			}
		}
	}
	if req, ok := s["required"].([]any); ok {
		kept := req[:0]
		for _, r := range req {
			if _, ok := props[r.(string)]; ok {
				kept = append(kept, r)
			}
		}
		if len(kept) == 0 {
			delete(s, "required")
		} else {
			s["required"] = kept
		}
	}
	if r, ok := props["refresh"].(map[string]any); ok {
		r["description"] = "cache (default), force (compute now) or direct (the stored table)."
	}
	if d, ok := props["debug"].(map[string]any); ok {
		d["description"] = "Add the SQL and timings."
	}
	if vars, ok := props["variables"].(map[string]any); ok {
		if each, ok := vars["properties"].(map[string]any); ok {
			for _, v := range each {
				if m, ok := v.(map[string]any); ok {
					if _, date := m["anyOf"]; date {
						delete(m, "anyOf")
						m["description"] = dateWords
					}
				}
			}
		}
	}
	return s
}

// dateWords describes a Date variable's value in a tool's schema.
const dateWords = "A date: YYYY-MM-DD, a date-time, or relative (-7d, -1m, mStart)."

// describeInsight describes an insight endpoint that has no description
// of its own from its query: its kind, series, breakdowns, interval and
// dates; "" when the query cannot be read.
func describeInsight(q endpoint.Query) string {
	iq, err := insight.Decode(q.Insight)
	if err != nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s", q.Kind)
	var series []string
	for _, s := range iq.Series {
		name := s.Event
		if name == "" {
			name = "all events"
		}
		if s.Math != "" {
			name += " (" + string(s.Math) + ")"
		}
		series = append(series, name)
	}
	if len(series) > 0 {
		fmt.Fprintf(&b, " of %s", strings.Join(series, ", "))
	}
	if iq.Kind == insight.Retention && iq.Retention.TargetEvent != "" {
		fmt.Fprintf(&b, " of %s", iq.Retention.TargetEvent)
	}
	var by []string
	for _, br := range iq.Breakdowns {
		by = append(by, br.Property)
	}
	if len(by) > 0 {
		fmt.Fprintf(&b, " by %s", strings.Join(by, ", "))
	}
	if iq.Interval != "" {
		fmt.Fprintf(&b, ", per %s", iq.Interval)
	}
	from, to := iq.DateRange.From, iq.DateRange.To
	switch {
	case from != "" && to != "":
		fmt.Fprintf(&b, ", from %s to %s", from, to)
	case from != "":
		fmt.Fprintf(&b, ", from %s", from)
	case to != "":
		fmt.Fprintf(&b, ", to %s", to)
	}
	return b.String() + "."
}

// brokenTool is the tool of an endpoint that cannot run (its version does
// not compile or cannot be described): listed with its error, so that an
// agent sees why rather than a tool missing; calling it answers the
// error.
func brokenTool(e endpoint.Endpoint, err error) *sdk.Tool {
	return &sdk.Tool{
		Name:        e.Name,
		Title:       "Endpoint " + e.Name + " (cannot run)",
		Description: "This endpoint cannot run: " + asError(err).Detail,
		InputSchema: emptyObject,
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
	}
}
