package insight

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"

	"github.com/endpointkit/endpointkit/variable"
)

// The date variables of an inline insight endpoint.
const (
	DateFrom = "date_from"
	DateTo   = "date_to"
)

// Variables returns the run-time variables of q: each breakdown property,
// named by the property ("$browser"), in breakdown order, then date_from
// and date_to unless the endpoint is materialized (its data is computed
// for the saved date range once).
func (q *Query) Variables(materialized bool) []string {
	names := make([]string, 0, len(q.Breakdowns)+2)
	for _, b := range q.Breakdowns {
		names = append(names, b.Property)
	}
	if !materialized {
		names = append(names, DateFrom, DateTo)
	}
	return names
}

// Apply returns a copy of q filtered by run-time values; q itself is left
// untouched. Each breakdown value becomes an exact-match filter on its
// property, AND-ed with the query's own filters (the empty string selects
// events without the property, the series whose breakdown_value is ""), so
// the result holds exactly the matching series of the unfiltered query.
// date_from and date_to replace the bounds of the date range; they take what
// a Date variable takes (see DateRange), and a date_to that is a date
// includes its whole day.
//
// Every variable may be omitted: an omitted breakdown variable leaves that
// breakdown unfiltered, so an inline run returns all its series; an omitted
// date keeps the saved bound. Keys that are not variables of q fail with an
// *UnknownVariablesError, bad values with a *ValueError.
func (q *Query) Apply(values map[string]any) (*Query, error) {
	return q.apply(values, false)
}

func (q *Query) apply(values map[string]any, materialized bool) (*Query, error) {
	known := q.Variables(materialized)
	var unknown []string
	for k := range values {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, &UnknownVariablesError{Keys: unknown}
	}
	c := q.clone()
	for _, b := range q.Breakdowns {
		raw, ok := values[b.Property]
		if !ok {
			continue
		}
		v, err := breakdownValue(b.Property, raw)
		if err != nil {
			return nil, err
		}
		if v == "" {
			c.Properties = append(c.Properties, Property{Key: b.Property, Operator: IsNotSet})
		} else {
			c.Properties = append(c.Properties, Property{Key: b.Property, Operator: Exact, Values: []string{v}})
		}
	}
	for _, d := range []struct {
		name string
		dst  *string
	}{{DateFrom, &c.DateRange.From}, {DateTo, &c.DateRange.To}} {
		raw, ok := values[d.name]
		if !ok {
			continue
		}
		s, err := dateBound(d.name, raw)
		if err != nil {
			return nil, err
		}
		*d.dst = s
	}
	return c, nil
}

// breakdownValue is the text a breakdown value is compared as. Numbers are
// accepted because a numeric property's breakdown_value is its decimal text.
func breakdownValue(name string, raw any) (string, error) {
	switch v := raw.(type) {
	case string:
		return v, nil
	case json.Number:
		return v.String(), nil
	case json.RawMessage:
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s, nil
		}
		var n json.Number
		if json.Unmarshal(v, &n) == nil {
			return n.String(), nil
		}
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case int:
		return strconv.Itoa(v), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	}
	return "", &ValueError{Variable: name, Value: raw, Reason: "must be a string (a value of the breakdown property)"}
}

// dateBound checks a date variable against the grammar of a Date variable
// (variable.ParseDateExpr). It keeps the text: a relative date resolves
// against the clock Compile is given, as a saved one does.
func dateBound(name string, raw any) (string, error) {
	s, ok := raw.(string)
	if m, isRaw := raw.(json.RawMessage); isRaw {
		ok = json.Unmarshal(m, &s) == nil
	}
	if !ok {
		return "", &ValueError{Variable: name, Value: raw, Reason: "must be a string: " + variable.DateForms}
	}
	if _, err := parseBound(s); err != nil {
		var de *variable.DateError
		errors.As(err, &de)
		return "", &ValueError{Variable: name, Value: raw, Reason: "must be " + de.Expected}
	}
	return s, nil
}
