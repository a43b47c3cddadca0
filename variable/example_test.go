package variable_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/endpointkit/endpointkit/variable"
)

func ExampleVariable_Normalize() {
	v := variable.Variable{
		ID:           "6F1C2B3A-4D5E-4F60-8A7B-9C0D1E2F3A4B",
		Name:         "Minimum amount ($)",
		Type:         variable.Number,
		DefaultValue: "10",
	}
	if err := v.Normalize(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(v.ID)
	fmt.Println(v.CodeName)
	fmt.Printf("%T %v\n", v.DefaultValue, v.DefaultValue)

	bad := variable.Variable{ID: v.ID, Name: "Country", CodeName: "1country", Type: variable.String}
	err := bad.Normalize()
	var de *variable.DefinitionError
	fmt.Println(errors.As(err, &de), de.Field)
	fmt.Println(err)
	// Output:
	// 6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b
	// minimum_amount
	// int64 10
	// true code_name
	// variable: code_name: must match ^[A-Za-z_][A-Za-z0-9_]*$, got "1country"
}

func ExampleVariable_Coerce() {
	// The clock of relative dates is an argument, in UTC.
	now := time.Date(2025, 6, 1, 9, 30, 0, 0, time.UTC)

	// A run request's variables, decoded as they arrive.
	var body struct {
		Variables map[string]json.RawMessage `json:"variables"`
	}
	_ = json.Unmarshal([]byte(`{"variables": {
		"min_amount": "12",
		"ratio": 0.5,
		"date_from": "-7d",
		"since": "-12h",
		"browsers": ["Chrome", "Safari"]
	}}`), &body)

	vars := []variable.Variable{
		{CodeName: "min_amount", Type: variable.Number},
		{CodeName: "ratio", Type: variable.Number},
		{CodeName: "date_from", Type: variable.Date},
		{CodeName: "since", Type: variable.Date},
		{CodeName: "browsers", Type: variable.List, IsMulti: true, Values: []string{"Chrome", "Firefox", "Safari"}},
	}
	for _, v := range vars {
		val, err := v.Coerce(body.Variables[v.CodeName], now)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s: %T %v\n", v.CodeName, val, val)
	}

	country := variable.Variable{CodeName: "country", Type: variable.Number}
	_, err := country.Coerce("12abc", now)
	fmt.Println(err, errors.Is(err, variable.ErrInvalidValue))
	// Output:
	// min_amount: int64 12
	// ratio: float64 0.5
	// date_from: variable.Timestamp 2025-05-25
	// since: variable.Timestamp 2025-05-31 21:00:00
	// browsers: []string [Chrome Safari]
	// variable "country": expected Number, got "12abc": not a number true
}

func ExampleCodeNameFrom() {
	for _, name := range []string{"Start date", "Min. amount ($)", "7 day window", "日付"} {
		fmt.Printf("%q -> %q\n", name, variable.CodeNameFrom(name))
	}
	// Output:
	// "Start date" -> "start_date"
	// "Min. amount ($)" -> "min_amount"
	// "7 day window" -> "_7_day_window"
	// "日付" -> ""
}

func ExampleMemoryStore() {
	ctx := context.Background()
	store := variable.NewMemoryStore()

	v := variable.Variable{ID: "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b", Name: "Country", Type: variable.String}
	if err := v.Normalize(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(store.Create(ctx, "project-1", v))

	// Another variable with the same code name conflicts in the same project.
	dup := v
	dup.ID = "00000000-0000-4000-8000-000000000001"
	err := store.Create(ctx, "project-1", dup)
	fmt.Println(errors.Is(err, variable.ErrConflict))

	// Projects are isolated.
	_, err = store.Get(ctx, "project-2", v.ID)
	fmt.Println(errors.Is(err, variable.ErrNotFound))

	got, _ := store.Get(ctx, "project-1", v.ID)
	fmt.Println(got.CodeName)
	// Output:
	// <nil>
	// true
	// true
	// country
}

func ExampleTimestamp_String() {
	fmt.Println(variable.Timestamp{Time: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC), DateOnly: true})
	fmt.Println(variable.Timestamp{Time: time.Date(2025, 6, 1, 9, 30, 0, 0, time.UTC)})
	fmt.Println(variable.Timestamp{Time: time.Date(2025, 6, 1, 9, 30, 0, 250_000_000, time.UTC)})
	// Output:
	// 2025-06-01
	// 2025-06-01 09:30:00
	// 2025-06-01 09:30:00.25
}

func ExampleParseDate() {
	// The last day of a month: a month step clamps to February's last day.
	now := time.Date(2025, 3, 31, 15, 47, 0, 0, time.UTC)
	for _, s := range []string{
		"2025-05-01",
		"2025-05-01 10:30:00",
		"2025-05-01T10:30:00+02:00",
		"-7d",
		"-1m",
		"-1mStart",
		"-24h",
		"yStart",
	} {
		ts, err := variable.ParseDate(s, now)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-26s %s\n", s, ts)
	}

	_, err := variable.ParseDate("2025-02-30", now)
	var de *variable.DateError
	fmt.Println(errors.As(err, &de), de.Expected)
	// Output:
	// 2025-05-01                 2025-05-01
	// 2025-05-01 10:30:00        2025-05-01 10:30:00
	// 2025-05-01T10:30:00+02:00  2025-05-01 08:30:00
	// -7d                        2025-03-24
	// -1m                        2025-02-28
	// -1mStart                   2025-02-01
	// -24h                       2025-03-30 15:00:00
	// yStart                     2025-01-01
	// true a day from 01 to 28 (2025-02 has 28 days)
}

func ExampleParseDateExpr() {
	// Check a saved bound once, without a clock; resolve it on each run.
	e, err := variable.ParseDateExpr("-1mStart")
	if err != nil {
		panic(err)
	}
	for _, now := range []time.Time{
		time.Date(2025, 3, 31, 12, 0, 0, 0, time.UTC),
		time.Date(2025, 6, 15, 12, 0, 0, 0, time.UTC),
	} {
		ts, _ := e.Resolve(now)
		// An upper bound includes the whole day: it ends Precision later.
		fmt.Println(ts, "to", ts.Time.Add(e.Precision()).Format(time.DateOnly))
	}
	// Output:
	// 2025-02-01 to 2025-02-02
	// 2025-05-01 to 2025-05-02
}
