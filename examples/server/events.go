package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// propertyRead is, per engine, how a query reads one property (country)
// of the demo's properties column, JSON text in a text column on every
// engine: PostgreSQL's ->> needs a jsonb, not its text.
var propertyRead = map[string]string{
	engine.SQLite.Name():     "json_extract(properties, '$.country')",
	engine.PostgreSQL.Name(): "properties::jsonb ->> 'country'",
	engine.MySQL.Name():      "JSON_VALUE(properties, '$.country')",
	engine.ClickHouse.Name(): "JSONExtractString(properties, 'country')",
}

// describeEvents prints what an endpoint may read: the events table's
// columns with their types on e, its event names, its properties, how to
// read one on e, and the days the demo events span.
func describeEvents(w io.Writer, e engine.Engine, end time.Time) {
	cols := make([]string, 0, len(demo.Columns))
	for _, c := range demo.Columns {
		cols = append(cols, c.Name+" "+e.Type(c.Kind))
	}
	fmt.Fprintf(w, "  table:       events(%s), each project its own rows (project_id)\n", strings.Join(cols, ", "))
	fmt.Fprintf(w, "  events:      %s\n", strings.Join(demo.EventNames, ", "))
	fmt.Fprintf(w, "  timestamp:   UTC text %q, %s to %s\n", "YYYY-MM-DD HH:MM:SS",
		end.AddDate(0, 0, -demo.Days).Format(time.DateOnly), end.AddDate(0, 0, -1).Format(time.DateOnly))
	fmt.Fprintf(w, "  properties:  JSON text: $browser, $os, country, plan, $current_url, amount (purchase)\n")
	fmt.Fprintf(w, "  a property:  %s\n", propertyRead[e.Name()])
}
