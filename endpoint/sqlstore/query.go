package sqlstore

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// queryRecord is the stored JSON of a driver.Query: the store's own
// format, not the API's JSON, since a store gives back exactly what it was
// given. A test value keeps its JSON text, and the insight query its bytes.
type queryRecord struct {
	Kind      string                    `json:"kind"`
	SQL       string                    `json:"query,omitempty"`
	Variables map[string]variableRecord `json:"variables,omitempty"`
	// EmptyVariables tells an empty, non-nil map from a nil one.
	EmptyVariables bool `json:"empty_variables,omitempty"`
	// Insight holds the insight query's bytes when encoding/json writes
	// them back unchanged (valid, compact JSON), so that the stored text
	// stays readable; InsightBytes (base64) holds any other bytes.
	Insight      json.RawMessage `json:"insight,omitempty"`
	InsightBytes []byte          `json:"insight_bytes,omitempty"`
	// EmptyInsight tells an empty, non-nil Insight from a nil one.
	EmptyInsight bool `json:"empty_insight,omitempty"`
}

type variableRecord struct {
	VariableID string `json:"variableId"`
	CodeName   string `json:"code_name"`
	// TestValue is the text of the test value (VariableRef.Value), kept
	// as a string so that its bytes come back as they were given.
	TestValue *string `json:"test_value,omitempty"`
	// Legacy is the test value of a row written before TestValue existed,
	// in the tagged form (see legacyJSON); read, never written.
	Legacy *tagged `json:"value,omitempty"`
}

// marshalQuery returns the stored text of q.
func marshalQuery(q driver.Query) (string, error) {
	if err := checkUTF8("query kind", q.Kind); err != nil {
		return "", err
	}
	if err := checkUTF8("query text", q.SQL); err != nil {
		return "", err
	}
	r := queryRecord{Kind: q.Kind, SQL: q.SQL}
	if q.Variables != nil {
		r.EmptyVariables = len(q.Variables) == 0
		r.Variables = make(map[string]variableRecord, len(q.Variables))
		for id, ref := range q.Variables {
			for what, s := range map[string]string{"query variable key": id, "variableId": ref.VariableID, "code_name": ref.CodeName} {
				if err := checkUTF8(what, s); err != nil {
					return "", err
				}
			}
			vr := variableRecord{VariableID: ref.VariableID, CodeName: ref.CodeName}
			if ref.Value != nil {
				text := string(ref.Value)
				if err := checkUTF8("test value", text); err != nil {
					return "", fmt.Errorf("query variable %s: %w", id, err)
				}
				vr.TestValue = &text
			}
			r.Variables[id] = vr
		}
	}
	switch {
	case q.Insight == nil:
	case len(q.Insight) == 0:
		r.EmptyInsight = true
	case writesBack(q.Insight):
		r.Insight = json.RawMessage(q.Insight)
	default:
		r.InsightBytes = q.Insight
	}
	b, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("encoding query: %w", err)
	}
	return string(b), nil
}

// unmarshalQuery decodes text written by marshalQuery. The result shares
// nothing with any other value.
func unmarshalQuery(s string) (driver.Query, error) {
	var r queryRecord
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return driver.Query{}, fmt.Errorf("decoding stored query: %w", err)
	}
	q := driver.Query{Kind: r.Kind, SQL: r.SQL}
	if len(r.Variables) > 0 || r.EmptyVariables {
		q.Variables = make(map[string]driver.VariableRef, len(r.Variables))
		for id, vr := range r.Variables {
			ref := driver.VariableRef{VariableID: vr.VariableID, CodeName: vr.CodeName}
			switch {
			case vr.TestValue != nil:
				ref.Value = json.RawMessage(*vr.TestValue)
			case vr.Legacy != nil:
				v, err := legacyJSON(*vr.Legacy)
				if err != nil {
					return driver.Query{}, fmt.Errorf("query variable %s: %w", id, err)
				}
				ref.Value = v
			}
			q.Variables[id] = ref
		}
	}
	switch {
	case r.Insight != nil:
		q.Insight = append([]byte(nil), r.Insight...)
	case r.InsightBytes != nil:
		q.Insight = r.InsightBytes
	case r.EmptyInsight:
		q.Insight = []byte{}
	}
	return q, nil
}

// writesBack reports whether encoding/json, given b as a json.RawMessage,
// writes exactly b; it compacts and escapes HTML characters, which would
// change bytes that are meant to be kept.
func writesBack(b []byte) bool {
	if !json.Valid(b) {
		return false
	}
	out, err := json.Marshal(json.RawMessage(b))
	return err == nil && bytes.Equal(out, b)
}
