package docs_test

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
)

// insightService is a Service over a few events of three users, whose
// clock reads 2025-05-05.
func insightService() *endpoint.Service {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		log.Fatal(err)
	}
	db.SetMaxOpenConns(1) // every connection to :memory: is a database of its own
	_, err = db.Exec(`CREATE TABLE events (uuid TEXT, event TEXT, distinct_id TEXT, timestamp TEXT, properties TEXT);
		INSERT INTO events VALUES
		('1', 'signed_up', 'ann', '2025-05-01 09:00:00', '{"$browser": "Chrome"}'),
		('2', 'purchase',  'ann', '2025-05-02 10:00:00', '{"$browser": "Chrome"}'),
		('3', 'signed_up', 'bob', '2025-05-02 11:00:00', '{"$browser": "Safari"}'),
		('4', 'purchase',  'bob', '2025-05-02 12:00:00', '{"$browser": "Safari"}'),
		('5', 'purchase',  'bob', '2025-05-04 08:00:00', '{"$browser": "Safari"}'),
		('6', 'signed_up', 'cid', '2025-05-01 15:00:00', '{"$browser": "Chrome"}')`)
	if err != nil {
		log.Fatal(err)
	}
	svc, err := endpoint.New(endpoint.Config{
		Endpoints: memstore.New(),
		Variables: variable.NewMemoryStore(),
		Executor:  sqlexec.New(db, engine.SQLite),
		Now:       func() time.Time { return time.Date(2025, 5, 5, 0, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		log.Fatal(err)
	}
	return svc
}

// A RetentionQuery endpoint: of the users who signed up each day, how many
// bought something on that day and on each day after.
func Example_retentionQuery() {
	ctx := context.Background()
	svc := insightService()
	var q endpoint.Query
	err := json.Unmarshal([]byte(`{"kind": "RetentionQuery",
		"retentionFilter": {
			"targetEntity": {"id": "signed_up", "type": "events"},
			"returningEntity": {"id": "purchase", "type": "events"},
			"period": "Day", "totalIntervals": 3, "retentionType": "retention_first_time"},
		"dateRange": {"date_from": "2025-05-01", "date_to": "2025-05-04"}}`), &q)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "signup_to_purchase", Query: &q}); err != nil {
		log.Fatal(err)
	}
	// Its variables are date_from, date_to and its breakdowns; each may be omitted.
	res, err := svc.Run(ctx, "1", "signup_to_purchase", endpoint.RunRequest{
		Variables: map[string]any{"date_from": "2025-05-02"},
	})
	if err != nil {
		log.Fatal(err)
	}
	out, _ := json.Marshal(res.Results)
	fmt.Println(string(out))
	// Output:
	// [{"date":"2025-05-02T00:00:00Z","label":"Day 0","values":[{"count":1,"label":"Day 0"},{"count":0,"label":"Day 1"},{"count":1,"label":"Day 2"}]},{"date":"2025-05-03T00:00:00Z","label":"Day 1","values":[{"count":0,"label":"Day 0"},{"count":0,"label":"Day 1"},{"count":0,"label":"Day 2"}]},{"date":"2025-05-04T00:00:00Z","label":"Day 2","values":[{"count":0,"label":"Day 0"},{"count":0,"label":"Day 1"},{"count":0,"label":"Day 2"}]}]
}

// A TrendsQuery endpoint: purchases per day, by browser.
func Example_trendsQuery() {
	ctx := context.Background()
	svc := insightService()
	var q endpoint.Query
	err := json.Unmarshal([]byte(`{"kind": "TrendsQuery",
		"series": [{"kind": "EventsNode", "event": "purchase"}],
		"interval": "day", "dateRange": {"date_from": "2025-05-01", "date_to": "2025-05-04"},
		"breakdownFilter": {"breakdown": "$browser", "breakdown_type": "event"}}`), &q)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "purchases_by_browser", Query: &q}); err != nil {
		log.Fatal(err)
	}
	res, err := svc.Run(ctx, "1", "purchases_by_browser", endpoint.RunRequest{
		Variables: map[string]any{"$browser": "Safari"},
	})
	if err != nil {
		log.Fatal(err)
	}
	out, _ := json.Marshal(res.Results)
	fmt.Println(string(out))
	// Output:
	// [{"label":"Safari","breakdown_value":"Safari","count":2,"data":[0,1,0,1],"days":["2025-05-01","2025-05-02","2025-05-03","2025-05-04"],"labels":["1-May-2025","2-May-2025","3-May-2025","4-May-2025"]}]
}

// A LifecycleQuery endpoint: buyers who are new, returning, resurrecting
// or dormant, day by day.
func Example_lifecycleQuery() {
	ctx := context.Background()
	svc := insightService()
	var q endpoint.Query
	err := json.Unmarshal([]byte(`{"kind": "LifecycleQuery",
		"series": [{"kind": "EventsNode", "event": "purchase"}],
		"interval": "day", "dateRange": {"date_from": "2025-05-02", "date_to": "2025-05-04"}}`), &q)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "buyers_lifecycle", Query: &q}); err != nil {
		log.Fatal(err)
	}
	res, err := svc.Run(ctx, "1", "buyers_lifecycle", endpoint.RunRequest{})
	if err != nil {
		log.Fatal(err)
	}
	var series []struct {
		Status string `json:"status"`
		Data   []int  `json:"data"`
	}
	out, _ := json.Marshal(res.Results)
	if err := json.Unmarshal(out, &series); err != nil {
		log.Fatal(err)
	}
	for _, s := range series {
		fmt.Println(s.Status, s.Data)
	}
	// Output:
	// new [1 0 0]
	// returning [0 0 0]
	// resurrecting [1 0 1]
	// dormant [0 -2 0]
}
