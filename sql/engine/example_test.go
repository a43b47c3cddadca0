package engine_test

import (
	"fmt"

	"github.com/endpointkit/endpointkit/sql/engine"
)

func ExampleByName() {
	e, err := engine.ByName("postgres")
	fmt.Println(e.Name(), err)
	_, err = engine.ByName("oracle")
	fmt.Println(err)
	// Output:
	// postgresql <nil>
	// engine: unknown engine "oracle" (want sqlite, postgresql, mysql or clickhouse)
}

func ExampleEngine_AppendString() {
	for _, e := range []engine.Engine{engine.SQLite, engine.MySQL} {
		fmt.Println(string(e.AppendString(nil, `it's C:\`)), e.QuoteIdent("my col"))
	}
	// Output:
	// 'it''s C:\' "my col"
	// 'it\'s C:\\' `my col`
}

func ExampleEngine_Truncate() {
	for _, e := range engine.All() {
		fmt.Printf("%s: %s\n", e, e.Truncate(engine.Week, e.Timestamp(e.QuoteIdent("timestamp"))))
	}
	// Output:
	// sqlite: strftime('%Y-%m-%d 00:00:00', "timestamp", 'weekday 0', '-6 days')
	// postgresql: date_trunc('week', ("timestamp")::timestamp)
	// mysql: DATE_FORMAT(DATE_SUB(`timestamp`, INTERVAL WEEKDAY(`timestamp`) DAY), '%Y-%m-%d 00:00:00')
	// clickhouse: toDateTime(toMonday(toDateTime(`timestamp`, 'UTC')), 'UTC')
}
