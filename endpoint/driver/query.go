package driver

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// MarshalJSON writes a KindSQL query as
// {"kind": "HogQLQuery", "query": ..., "variables": {...}} and an insight
// query as the raw object it was read from.
func (q Query) MarshalJSON() ([]byte, error) {
	if q.Kind == KindSQL {
		// SQL is full of < and >; HTML escaping would show them as \u003c
		// and \u003e to every API client.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(sqlWire{Kind: q.Kind, Query: q.SQL, Variables: q.Variables}); err != nil {
			return nil, err
		}
		return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
	}
	if len(q.Insight) > 0 {
		if !json.Valid(q.Insight) {
			return nil, fmt.Errorf("driver: query of kind %q holds invalid JSON", q.Kind)
		}
		return append([]byte(nil), q.Insight...), nil
	}
	return json.Marshal(struct {
		Kind string `json:"kind"`
	}{q.Kind})
}

// sqlWire is the JSON shape of a KindSQL query.
type sqlWire struct {
	Kind      string                 `json:"kind"`
	Query     string                 `json:"query"`
	Variables map[string]VariableRef `json:"variables,omitempty"`
}
