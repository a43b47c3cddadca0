// Package jsonrule holds the cases of the library's one JSON rule (see
// docs/engines.md, "The JSON rule"), which the tests of every engine check
// its engine.JSONText and engine.JSONNumber against, so that a change of
// the rule is one change.
package jsonrule

// Case is a JSON column value and what the rule reads of its key "k".
type Case struct {
	// JSON is the column's text; nil is a NULL column.
	JSON any
	// Text is what JSONText reads: '' for missing, JSON null or "", the
	// value of a string, the JSON text of a number or of true and false.
	Text string
	// Num is what JSONNumber reads: the value of a JSON number (a float64),
	// nil for anything else, a number stored as text included.
	Num any
}

// Cases are the rule's cases, each where engines are known to part.
var Cases = []Case{
	{`{"k":"pro"}`, "pro", nil},
	{`{"k":"pro "}`, "pro ", nil},
	{`{"k":"Pro"}`, "Pro", nil},
	{`{"k":"ñandú"}`, "ñandú", nil},
	{`{"k":"\u00f1and\u00fa"}`, "ñandú", nil},
	{`{"k":""}`, "", nil},
	{`{"k":null}`, "", nil},
	{`{}`, "", nil},
	{`{"other":1}`, "", nil},
	{nil, "", nil},
	{`{"k":"null"}`, "null", nil},
	{`{"k":12}`, "12", 12.0},
	{`{"k":-3.5}`, "-3.5", -3.5},
	{`{"k":0}`, "0", 0.0},
	{`{"k":"12"}`, "12", nil},
	{`{"k":true}`, "true", nil},
	{`{"k":false}`, "false", nil},
}

// Writer is where a statement is written: its text, and its values bound
// in order (a placeholder.Builder, or a test's own writer).
type Writer interface {
	WriteString(s string)
	Bind(v any)
}

// WriteInsert writes into w the INSERT of case number i into table (a
// name quoted for its engine already): the row (i, the case's JSON), with
// NULL for a nil JSON.
func WriteInsert(w Writer, table string, i int, c Case) {
	w.WriteString("INSERT INTO " + table + " VALUES (")
	w.Bind(int64(i))
	w.WriteString(", ")
	if c.JSON == nil {
		w.WriteString("NULL")
	} else {
		w.Bind(c.JSON)
	}
	w.WriteString(")")
}
