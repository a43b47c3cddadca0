package endpoint_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	_ "modernc.org/sqlite"
)

// An insight endpoint needs no variables of its own: its breakdown
// properties and date_from/date_to are its variables, and each may be
// omitted.
func ExampleService_Run_insight() {
	ctx := context.Background()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		log.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	_, err = db.Exec(`CREATE TABLE events (uuid TEXT, event TEXT, distinct_id TEXT, timestamp TEXT, properties TEXT);
		INSERT INTO events VALUES
		('1', '$pageview', 'ann', '2025-05-01 09:00:00', '{"$browser": "Chrome"}'),
		('2', '$pageview', 'ann', '2025-05-02 10:00:00', '{"$browser": "Chrome"}'),
		('3', '$pageview', 'bob', '2025-05-03 23:59:59', '{"$browser": "Safari"}')`)
	if err != nil {
		log.Fatal(err)
	}
	svc, err := endpoint.New(endpoint.Config{
		Endpoints: memstore.New(),
		Variables: variable.NewMemoryStore(),
		Executor:  sqlexec.New(db, engine.SQLite),
		Now:       func() time.Time { return time.Date(2025, 5, 4, 0, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		log.Fatal(err)
	}
	var q endpoint.Query
	err = json.Unmarshal([]byte(`{"kind": "TrendsQuery",
		"series": [{"kind": "EventsNode", "event": "$pageview"}],
		"interval": "day",
		"dateRange": {"date_from": "2025-05-01", "date_to": "2025-05-03"},
		"breakdownFilter": {"breakdown": "$browser", "breakdown_type": "event"}}`), &q)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "pageviews", Query: &q}); err != nil {
		log.Fatal(err)
	}
	for _, vars := range []map[string]any{
		{"$browser": "Chrome"},
		{"$browser": "Safari", "date_from": "2025-05-03"},
		{"browser": "Chrome"},
	} {
		res, err := svc.Run(ctx, "1", "pageviews", endpoint.RunRequest{Variables: vars})
		if err != nil {
			fmt.Println(err)
			continue
		}
		out, _ := json.Marshal(res.Results)
		fmt.Println(string(out))
	}
	// Output:
	// [{"label":"Chrome","breakdown_value":"Chrome","count":2,"data":[1,1,0],"days":["2025-05-01","2025-05-02","2025-05-03"],"labels":["1-May-2025","2-May-2025","3-May-2025"]}]
	// [{"label":"Safari","breakdown_value":"Safari","count":1,"data":[1],"days":["2025-05-03"],"labels":["3-May-2025"]}]
	// Unknown variable(s): browser
}
