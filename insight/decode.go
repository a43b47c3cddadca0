package insight

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// Limits that keep one query's SQL and results of a sane size.
const (
	maxSeries         = 20
	maxBreakdowns     = 3
	maxProperties     = 50
	maxValues         = 100
	maxTotalIntervals = 100
)

// Decode reads the JSON of a TrendsQuery, RetentionQuery or LifecycleQuery. It refuses
// anything outside the supported subset with an *Error naming the field, so
// that a saved endpoint never silently computes something other than what
// its query says. Fields that only change how a client draws the result
// (trendsFilter.display of a time series, showLegend, ...) are accepted and
// have no effect.
func Decode(data []byte) (*Query, error) {
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		return nil, errorf("", "malformed JSON: %v", err)
	}
	o, err := parseObject(data, "")
	if err != nil {
		return nil, err
	}
	kind, _, err := o.str("kind")
	if err != nil {
		return nil, err
	}
	q := &Query{Kind: Kind(kind)}
	switch q.Kind {
	case Trends:
		err = decodeTrends(o, q)
	case Retention:
		err = decodeRetention(o, q)
	case Lifecycle:
		err = decodeLifecycle(o, q)
	case "":
		err = errorf("kind", "required (TrendsQuery, RetentionQuery or LifecycleQuery)")
	default:
		err = errorf("kind", "unsupported kind %q (supported: TrendsQuery, RetentionQuery, LifecycleQuery)", kind)
	}
	if err != nil {
		return nil, err
	}
	if err := decodeCommon(o, q); err != nil {
		return nil, err
	}
	if err := o.done(); err != nil {
		return nil, err
	}
	return q, nil
}

// decodeCommon reads what both kinds share.
func decodeCommon(o *object, q *Query) error {
	o.ignore("version", "response", "tags")
	if err := o.refuse("filterTestAccounts", "filtering test accounts is not supported", "false"); err != nil {
		return err
	}
	if err := o.refuse("aggregation_group_type_index", "group aggregation is not supported"); err != nil {
		return err
	}
	if err := o.refuse("samplingFactor", "sampling is not supported", "1", "1.0"); err != nil {
		return err
	}
	if raw, ok := o.take("dateRange"); ok {
		dr, err := decodeDateRange(raw, "dateRange")
		if err != nil {
			return err
		}
		q.DateRange = dr
	}
	if raw, ok := o.take("properties"); ok {
		props, err := decodeProperties(raw, "properties")
		if err != nil {
			return err
		}
		q.Properties = props
	}
	if raw, ok := o.take("breakdownFilter"); ok {
		if err := decodeBreakdownFilter(raw, "breakdownFilter", q); err != nil {
			return err
		}
	}
	return nil
}

func decodeTrends(o *object, q *Query) error {
	series, err := decodeSeriesList(o)
	if err != nil {
		return err
	}
	q.Series = series
	if q.Interval, err = decodeInterval(o); err != nil {
		return err
	}
	if raw, ok := o.take("trendsFilter"); ok {
		if err := decodeTrendsFilter(raw, "trendsFilter"); err != nil {
			return err
		}
	}
	if raw, ok := o.take("compareFilter"); ok {
		return decodeCompareFilter(raw, "compareFilter")
	}
	return nil
}

// decodeSeriesList reads series: one to maxSeries EventsNodes.
func decodeSeriesList(o *object) ([]Series, error) {
	elems, ok, err := o.array("series")
	if err != nil {
		return nil, err
	}
	if !ok || len(elems) == 0 {
		return nil, errorf("series", "required: at least one EventsNode")
	}
	if len(elems) > maxSeries {
		return nil, errorf("series", "at most %d series, got %d", maxSeries, len(elems))
	}
	series := make([]Series, 0, len(elems))
	for i, raw := range elems {
		s, err := decodeSeries(raw, fmt.Sprintf("series[%d]", i))
		if err != nil {
			return nil, err
		}
		series = append(series, s)
	}
	return series, nil
}

// decodeInterval reads interval, Day when absent.
func decodeInterval(o *object) (engine.Bucket, error) {
	s, ok, err := o.str("interval")
	switch {
	case err != nil:
		return "", err
	case !ok:
		return engine.Day, nil
	case !slices.Contains(intervals, engine.Bucket(s)):
		return "", errorf("interval", "unsupported interval %q (supported: %s)", s, oneOf(intervals))
	}
	return engine.Bucket(s), nil
}

// decodeCompareFilter accepts a compareFilter that compares nothing.
func decodeCompareFilter(raw json.RawMessage, path string) error {
	c, err := parseObject(raw, path)
	if err != nil {
		return err
	}
	if compare, err := c.boolean("compare"); err != nil {
		return err
	} else if compare {
		return errorf(path, "comparing to a previous period is not supported")
	}
	if err := c.refuse("compare_to", "comparing to a previous period is not supported"); err != nil {
		return err
	}
	return c.done()
}

// timeSeriesDisplays are the displays whose data is the plain per-interval
// series; others (cumulative, pie, number, table) reshape the result.
var timeSeriesDisplays = []string{"ActionsLineGraph", "ActionsBar", "ActionsAreaGraph"}

func decodeTrendsFilter(raw json.RawMessage, path string) error {
	o, err := parseObject(raw, path)
	if err != nil {
		return err
	}
	o.ignore("showLegend", "showValuesOnSeries", "showLabelsOnSeries", "showPercentStackView",
		"showMultipleYAxes", "aggregationAxisFormat", "aggregationAxisPrefix", "aggregationAxisPostfix",
		"decimalPlaces", "yAxisScaleType", "hiddenLegendIndexes", "showAlertThresholdLines",
		"resultCustomizations", "resultCustomizationBy", "goalLines", "minDecimalPlaces")
	if d, ok, err := o.str("display"); err != nil {
		return err
	} else if ok && !slices.Contains(timeSeriesDisplays, d) {
		return errorf(o.field("display"), "unsupported display %q (supported: %s)", d, strings.Join(timeSeriesDisplays, ", "))
	}
	if err := o.refuse("formula", "formulas are not supported", `""`); err != nil {
		return err
	}
	if err := o.refuse("formulas", "formulas are not supported", "[]"); err != nil {
		return err
	}
	if err := o.refuse("formulaNodes", "formulas are not supported", "[]"); err != nil {
		return err
	}
	if err := o.refuse("smoothingIntervals", "smoothing is not supported", "1"); err != nil {
		return err
	}
	return o.done()
}

func decodeSeries(raw json.RawMessage, path string) (Series, error) {
	var s Series
	o, err := parseObject(raw, path)
	if err != nil {
		return s, err
	}
	switch kind, _, err := o.str("kind"); {
	case err != nil:
		return s, err
	case kind != "EventsNode":
		return s, errorf(o.field("kind"), "unsupported series kind %q (supported: EventsNode)", kind)
	}
	o.ignore("name", "custom_name", "version", "order")
	if s.Event, _, err = o.str("event"); err != nil {
		return s, err
	}
	if s.Math, err = decodeMath(o); err != nil {
		return s, err
	}
	if s.MathProperty, err = decodeMathProperty(o, s.Math); err != nil {
		return s, err
	}
	if err := o.refuseAll(seriesRefusals); err != nil {
		return s, err
	}
	return s, o.done()
}

// seriesRefusals are the fields of a series that the compiler has no SQL
// for.
var seriesRefusals = []refusal{
	{"math_property_type", "only event properties can be aggregated", []string{`"event_properties"`}},
	{"math_hogql", "not supported", nil},
	{"math_group_type_index", "not supported", nil},
	{"math_multiplier", "not supported", nil},
	{"properties", "series-level property filters are not supported; use the query's properties", []string{"[]"}},
	{"fixedProperties", "not supported", []string{"[]"}},
}

// decodeMath reads a series' math, Total when absent.
func decodeMath(o *object) (Math, error) {
	m, ok, err := o.str("math")
	switch {
	case err != nil:
		return "", err
	case !ok:
		return Total, nil
	case !slices.Contains(maths, Math(m)):
		return "", errorf(o.field("math"), "unsupported math %q (supported: %s)", m, oneOf(maths))
	}
	return Math(m), nil
}

// decodeMathProperty reads the property that math aggregates: required
// by the maths that need one, refused by the others.
func decodeMathProperty(o *object, math Math) (string, error) {
	prop, hasProp, err := o.str("math_property")
	if err != nil {
		return "", err
	}
	switch {
	case math.needsProperty() && (!hasProp || prop == ""):
		return "", errorf(o.field("math_property"), "required for math %q", math)
	case !math.needsProperty() && hasProp:
		return "", errorf(o.field("math_property"), "math %q takes no property", math)
	case hasProp:
		if err := checkKey(prop, o.field("math_property")); err != nil {
			return "", err
		}
	}
	return prop, nil
}

// refusal is a field that a decoder refuses when it is present with
// anything but null or one of the harmless values (see object.refuse).
type refusal struct {
	key, why string
	harmless []string
}

// refuseAll applies refusals in order, failing on the first.
func (o *object) refuseAll(refusals []refusal) error {
	for _, r := range refusals {
		if err := o.refuse(r.key, r.why, r.harmless...); err != nil {
			return err
		}
	}
	return nil
}

func decodeDateRange(raw json.RawMessage, path string) (DateRange, error) {
	var dr DateRange
	o, err := parseObject(raw, path)
	if err != nil {
		return dr, err
	}
	o.ignore("explicitDate")
	for _, b := range []struct {
		key string
		dst *string
	}{{"date_from", &dr.From}, {"date_to", &dr.To}} {
		s, _, err := o.str(b.key)
		if err != nil {
			return dr, err
		}
		if s != "" {
			if _, err := parseBound(s); err != nil {
				return dr, errorf(o.field(b.key), "%v", err)
			}
		}
		*b.dst = s
	}
	return dr, o.done()
}

// decodeProperties reads a list of filters or a PostHog property group whose
// groups are all AND (an OR of more than one filter is refused).
func decodeProperties(raw json.RawMessage, path string) ([]Property, error) {
	var props []Property
	if err := appendProperties(&props, raw, path, 0); err != nil {
		return nil, err
	}
	if len(props) > maxProperties {
		return nil, errorf(path, "at most %d property filters, got %d", maxProperties, len(props))
	}
	return props, nil
}

func appendProperties(props *[]Property, raw json.RawMessage, path string, depth int) error {
	if depth > 4 {
		return errorf(path, "property groups nested too deeply")
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err == nil {
		for i, e := range elems {
			if err := appendProperty(props, e, fmt.Sprintf("%s[%d]", path, i), depth); err != nil {
				return err
			}
		}
		return nil
	}
	return appendProperty(props, raw, path, depth)
}

func appendProperty(props *[]Property, raw json.RawMessage, path string, depth int) error {
	o, err := parseObject(raw, path)
	if err != nil {
		return err
	}
	if values, isGroup := o.fields["values"]; isGroup {
		if _, hasKey := o.fields["key"]; !hasKey {
			typ, _, err := o.str("type")
			if err != nil {
				return err
			}
			o.take("values")
			if err := o.done(); err != nil {
				return err
			}
			if typ == "OR" {
				var elems []json.RawMessage
				if json.Unmarshal(values, &elems) != nil || len(elems) > 1 {
					return errorf(path+".type", "OR property groups are not supported")
				}
			} else if typ != "AND" {
				return errorf(path+".type", "unsupported property group type %q (supported: AND)", typ)
			}
			return appendProperties(props, values, path+".values", depth+1)
		}
	}
	p, err := decodeProperty(o)
	if err != nil {
		return err
	}
	*props = append(*props, p)
	return nil
}

func decodeProperty(o *object) (Property, error) {
	var p Property
	switch typ, ok, err := o.str("type"); {
	case err != nil:
		return p, err
	case ok && typ != "event":
		return p, errorf(o.field("type"), "unsupported property type %q (supported: event)", typ)
	}
	key, _, err := o.str("key")
	if err != nil {
		return p, err
	}
	if key == "" {
		return p, errorf(o.field("key"), "required")
	}
	if err := checkKey(key, o.field("key")); err != nil {
		return p, err
	}
	p.Key = key
	if p.Operator, err = decodeOperator(o); err != nil {
		return p, err
	}
	o.ignore("label")
	raw, hasValue := o.take("value")
	if err := p.decodeValue(raw, hasValue, o.field("value")); err != nil {
		return p, err
	}
	return p, o.done()
}

// decodeOperator reads a property filter's operator, Exact when absent.
func decodeOperator(o *object) (Operator, error) {
	op, ok, err := o.str("operator")
	switch {
	case err != nil:
		return "", err
	case !ok:
		return Exact, nil
	case !slices.Contains(operators, Operator(op)):
		return "", errorf(o.field("operator"), "unsupported operator %q (supported: %s)", op, oneOf(operators))
	}
	return Operator(op), nil
}

// decodeValue reads the value that p's operator compares with: none for
// is_set and is_not_set, a number for gt and lt, one non-empty text for
// icontains and not_icontains, one text or a list of texts for the others.
func (p *Property) decodeValue(raw json.RawMessage, hasValue bool, field string) error {
	if p.Operator == IsSet || p.Operator == IsNotSet {
		// PostHog's editor sends the operator's name as the value; nothing to compare.
		return nil
	}
	if !hasValue {
		return errorf(field, "required for operator %q", p.Operator)
	}
	var err error
	switch p.Operator {
	case GT, LT:
		p.Number, err = numberValue(raw, field)
	case IContains, NotIContains:
		var s string
		if s, err = scalarText(raw, field); err == nil && s == "" {
			err = errorf(field, "must not be empty for operator %q", p.Operator)
		}
		p.Values = []string{s}
	default:
		p.Values, err = textValues(raw, field)
	}
	return err
}

// textValues reads a value or a list of values compared as text.
func textValues(raw json.RawMessage, field string) ([]string, error) {
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		elems = []json.RawMessage{raw}
	}
	if len(elems) == 0 {
		return nil, errorf(field, "must not be an empty list")
	}
	if len(elems) > maxValues {
		return nil, errorf(field, "at most %d values, got %d", maxValues, len(elems))
	}
	values := make([]string, len(elems))
	for i, e := range elems {
		s, err := scalarText(e, field)
		if err != nil {
			return nil, err
		}
		values[i] = s
	}
	return values, nil
}

// scalarText is the text form a string or number property is compared in.
func scalarText(raw json.RawMessage, field string) (string, error) {
	var v any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", errorf(field, "malformed value")
	}
	switch v := v.(type) {
	case string:
		return v, nil
	case json.Number:
		return v.String(), nil
	default:
		return "", errorf(field, "must be a string or a number, got %s", kindOf(raw))
	}
}

func numberValue(raw json.RawMessage, field string) (float64, error) {
	s, err := scalarText(raw, field)
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, errorf(field, "must be a number, got %s", kindOf(raw))
	}
	return f, nil
}

func decodeBreakdownFilter(raw json.RawMessage, path string, q *Query) error {
	o, err := parseObject(raw, path)
	if err != nil {
		return err
	}
	bds, err := decodeSingleBreakdown(o)
	if err != nil {
		return err
	}
	elems, _, err := o.array("breakdowns")
	if err != nil {
		return err
	}
	if len(bds) > 0 && len(elems) > 0 {
		return errorf(o.field("breakdowns"), "give either breakdown or breakdowns, not both")
	}
	if len(elems) > maxBreakdowns {
		return errorf(o.field("breakdowns"), "at most %d breakdowns, got %d", maxBreakdowns, len(elems))
	}
	for i, e := range elems {
		b, err := decodeBreakdown(e, fmt.Sprintf("%s[%d]", o.field("breakdowns"), i))
		if err != nil {
			return err
		}
		bds = append(bds, b)
	}
	if err := checkBreakdowns(bds, path); err != nil {
		return err
	}
	q.Breakdowns = bds
	if q.Kind == Trends {
		if err := decodeBreakdownLimit(o, q); err != nil {
			return err
		}
	} else {
		// A retention query returns the cohorts of every breakdown
		// value, and has no other series to hide.
		o.ignore("breakdown_hide_other_aggregation")
		if err := o.refuse("breakdown_limit", "not supported by a RetentionQuery (every breakdown value is returned)"); err != nil {
			return err
		}
	}
	if err := o.refuseAll(breakdownFilterRefusals); err != nil {
		return err
	}
	return o.done()
}

// decodeBreakdownLimit reads breakdown_limit, 0 (DefaultBreakdownLimit)
// when absent or null as PostHog reads it, and
// breakdown_hide_other_aggregation, false when absent. A limit below 1 is
// refused rather than read as the default, as PostHog does with 0, so that
// a saved query never means something other than what it says; the most a
// query may ask for is the host's decision (the endpoint package's
// Config.MaxBreakdownLimit), not this package's.
func decodeBreakdownLimit(o *object, q *Query) error {
	n, ok, err := o.integer("breakdown_limit")
	switch {
	case err != nil:
		return err
	case ok && n < 1:
		return errorf(o.field("breakdown_limit"), "must be at least 1, got %d", n)
	}
	q.BreakdownLimit = n
	q.HideOther, err = o.boolean("breakdown_hide_other_aggregation")
	return err
}

// breakdownFilterRefusals are the fields of a breakdownFilter that would
// reshape breakdown values.
var breakdownFilterRefusals = []refusal{
	{"breakdown_histogram_bin_count", "histogram bins are not supported", nil},
	{"breakdown_group_type_index", "group breakdowns are not supported", nil},
	{"breakdown_normalize_url", "not supported", []string{"false"}},
}

// decodeSingleBreakdown reads the older one-property form, breakdown and
// breakdown_type: no breakdown, or one.
func decodeSingleBreakdown(o *object) ([]Breakdown, error) {
	single, hasSingle, err := o.str("breakdown")
	if err != nil {
		return nil, errorf(o.field("breakdown"), "must be the name of an event property")
	}
	typ, hasType, err := o.str("breakdown_type")
	if err != nil {
		return nil, err
	}
	if hasType && typ != "event" {
		return nil, errorf(o.field("breakdown_type"), "unsupported breakdown type %q (supported: event)", typ)
	}
	if !hasSingle {
		return nil, nil
	}
	if err := checkKey(single, o.field("breakdown")); err != nil {
		return nil, err
	}
	return []Breakdown{{Property: single}}, nil
}

// checkBreakdowns refuses a breakdown property given twice, or named like
// a date variable: each becomes a result column and a variable.
func checkBreakdowns(bds []Breakdown, path string) error {
	for i, b := range bds {
		if b.Property == "date_from" || b.Property == "date_to" {
			return errorf(path, "breakdown property %q collides with the date variable of the same name", b.Property)
		}
		for _, c := range bds[:i] {
			if c.Property == b.Property {
				return errorf(path, "breakdown property %q appears twice", b.Property)
			}
		}
	}
	return nil
}

func decodeBreakdown(raw json.RawMessage, path string) (Breakdown, error) {
	var b Breakdown
	o, err := parseObject(raw, path)
	if err != nil {
		return b, err
	}
	typ, hasType, err := o.str("type")
	if err != nil {
		return b, err
	}
	if hasType && typ != "event" {
		return b, errorf(o.field("type"), "unsupported breakdown type %q (supported: event)", typ)
	}
	prop, _, err := o.str("property")
	if err != nil {
		return b, errorf(o.field("property"), "must be the name of an event property")
	}
	if err := checkKey(prop, o.field("property")); err != nil {
		return b, err
	}
	b.Property = prop
	if err := o.refuse("normalize_url", "not supported", "false"); err != nil {
		return b, err
	}
	for _, key := range []string{"histogram_bin_count", "group_type_index"} {
		if err := o.refuse(key, "not supported"); err != nil {
			return b, err
		}
	}
	return b, o.done()
}

// checkKey refuses property names that no engine's JSON path syntax can
// carry: the key travels as a bound argument, but inside a path string
// (`$."<key>"`) where a quote or backslash would end or escape the label.
func checkKey(key, field string) error {
	switch {
	case key == "":
		return errorf(field, "required")
	case len(key) > 200:
		return errorf(field, "property name longer than 200 bytes")
	case !utf8.ValidString(key):
		return errorf(field, "property name is not valid UTF-8")
	case strings.ContainsAny(key, "\"\\"):
		return errorf(field, "property name %q contains a quote or backslash, which is not supported", key)
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f {
			return errorf(field, "property name %q contains a control character", key)
		}
	}
	return nil
}

func decodeRetention(o *object, q *Query) error {
	raw, ok := o.take("retentionFilter")
	if !ok {
		return errorf("retentionFilter", "required")
	}
	f, err := parseObject(raw, "retentionFilter")
	if err != nil {
		return err
	}
	f.ignore("display", "showMean", "meanRetentionCalculation", "dashboardDisplay", "selectedInterval")
	r := &q.Retention
	if r.TargetEvent, err = decodeEntityField(f, "targetEntity"); err != nil {
		return err
	}
	if r.ReturningEvent, err = decodeEntityField(f, "returningEntity"); err != nil {
		return err
	}
	if q.Interval, err = decodePeriod(f); err != nil {
		return err
	}
	if r.TotalIntervals, err = decodeTotalIntervals(f); err != nil {
		return err
	}
	if r.Type, err = decodeRetentionType(f); err != nil {
		return err
	}
	if err := f.refuseAll(retentionRefusals); err != nil {
		return err
	}
	return f.done()
}

// retentionRefusals are the fields of a retentionFilter that change what
// is counted.
var retentionRefusals = []refusal{
	{"cumulative", "cumulative retention is not supported", []string{"false"}},
	{"minimumOccurrences", "a minimum number of occurrences is not supported", []string{"1"}},
	{"retentionReference", "not supported", []string{`"total"`}},
}

// decodeEntityField reads the required entity under key: its event name.
func decodeEntityField(f *object, key string) (string, error) {
	raw, ok := f.take(key)
	if !ok {
		return "", errorf(f.field(key), "required: {\"id\": \"<event>\", \"type\": \"events\"}")
	}
	return decodeEntity(raw, f.field(key))
}

// retentionPeriods are the retention periods by their PostHog names.
var retentionPeriods = map[string]engine.Bucket{"Day": engine.Day, "Week": engine.Week, "Month": engine.Month}

// decodePeriod reads period, Day when absent.
func decodePeriod(f *object) (engine.Bucket, error) {
	p, ok, err := f.str("period")
	if err != nil || !ok {
		return engine.Day, err
	}
	iv, known := retentionPeriods[p]
	if !known {
		return "", errorf(f.field("period"), "unsupported period %q: period must be one of Day, Week, Month", p)
	}
	return iv, nil
}

// decodeTotalIntervals reads totalIntervals, 7 when absent.
func decodeTotalIntervals(f *object) (int, error) {
	n, ok, err := f.integer("totalIntervals")
	switch {
	case err != nil:
		return 0, err
	case !ok:
		return 7, nil
	case n < 1 || n > maxTotalIntervals:
		return 0, errorf(f.field("totalIntervals"), "must be between 1 and %d, got %d", maxTotalIntervals, n)
	}
	return n, nil
}

// decodeRetentionType reads retentionType, Recurring when absent.
func decodeRetentionType(f *object) (RetentionType, error) {
	t, ok, err := f.str("retentionType")
	switch {
	case err != nil:
		return "", err
	case !ok:
		return Recurring, nil
	case t != string(FirstTime) && t != string(Recurring):
		return "", errorf(f.field("retentionType"), "unsupported retention type %q (supported: %s, %s)", t, FirstTime, Recurring)
	}
	return RetentionType(t), nil
}

func decodeEntity(raw json.RawMessage, path string) (string, error) {
	o, err := parseObject(raw, path)
	if err != nil {
		return "", err
	}
	o.ignore("name", "custom_name", "order", "uuid")
	switch typ, _, err := o.str("type"); {
	case err != nil:
		return "", err
	case typ != "events":
		return "", errorf(o.field("type"), "unsupported entity type %q (supported: events)", typ)
	}
	if kind, ok, err := o.str("kind"); err != nil {
		return "", err
	} else if ok && kind != "EventsNode" {
		return "", errorf(o.field("kind"), "unsupported entity kind %q (supported: EventsNode)", kind)
	}
	id, _, err := o.str("id")
	if err != nil {
		return "", errorf(o.field("id"), "must be an event name")
	}
	if id == "" {
		return "", errorf(o.field("id"), "required: the event name")
	}
	if err := o.refuse("properties", "entity-level property filters are not supported; use the query's properties", "[]"); err != nil {
		return "", err
	}
	return id, o.done()
}

// decodeLifecycle reads a LifecycleQuery: one EventsNode series (its math,
// if given, must be total: a lifecycle counts users), the interval, and a
// lifecycleFilter, which only changes how a client draws the result.
// Breakdowns are not part of PostHog's LifecycleQuery and are refused.
func decodeLifecycle(o *object, q *Query) error {
	elems, ok, err := o.array("series")
	if err != nil {
		return err
	}
	if !ok || len(elems) != 1 {
		return errorf("series", "required: exactly one EventsNode, got %d", len(elems))
	}
	s, err := decodeSeries(elems[0], "series[0]")
	if err != nil {
		return err
	}
	if s.Math != Total {
		return errorf("series[0].math", "unsupported math %q: a lifecycle counts users (supported: total)", s.Math)
	}
	q.Series = []Series{s}
	if q.Interval, err = decodeInterval(o); err != nil {
		return err
	}
	if err := o.refuse("breakdownFilter", "breakdowns are not part of a LifecycleQuery", "{}"); err != nil {
		return err
	}
	o.ignore("dataColorTheme")
	if raw, ok := o.take("lifecycleFilter"); ok {
		return decodeLifecycleFilter(raw, "lifecycleFilter")
	}
	return nil
}

// decodeLifecycleFilter accepts a lifecycleFilter: what it holds chooses
// what a client draws (toggledLifecycles hides statuses in the chart;
// PostHog's runner returns all four whatever it says, and so does this
// package), but a status it names must be one.
func decodeLifecycleFilter(raw json.RawMessage, path string) error {
	o, err := parseObject(raw, path)
	if err != nil {
		return err
	}
	o.ignore("showLegend", "showValuesOnSeries", "stacked")
	elems, _, err := o.array("toggledLifecycles")
	if err != nil {
		return err
	}
	for i, e := range elems {
		var st string
		if json.Unmarshal(e, &st) != nil || !slices.Contains(statuses, Status(st)) {
			return errorf(fmt.Sprintf("%s[%d]", o.field("toggledLifecycles"), i), "unknown lifecycle status %s (supported: %s)", kindOf(e), oneOf(statuses))
		}
	}
	return o.done()
}
