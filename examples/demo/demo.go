// Package demo generates a deterministic set of analytics events and loads it
// into a database/sql database. The example server serves it, and the tests
// and benchmarks of the other packages measure against it.
package demo

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// End is the instant the demo data of Generate, Insert and InsertWith ends
// at: every event lies in the Days days before it. GenerateUntil and
// InsertUntil take another end (the example server's is the day it
// starts, so that relative dates such as -7d answer).
var End = time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)

// Days is how many days the demo data spans.
const Days = 90

// TimeLayout is how timestamps are stored: UTC text that sorts as time does.
const TimeLayout = "2006-01-02 15:04:05"

// Schema creates the events table and its indexes on SQLite when they do not
// exist (SchemaFor gives it for any engine). project_id is the tenant: each
// event belongs to one project, and a host scopes every read of a project
// to its own rows. The indexes that lead with it serve those scoped reads;
// events_timestamp serves reads of a time range that are not scoped (a
// host with one tenant): the partial buckets and the live tail of a
// materialized endpoint read a few hours of events through one or the
// other.
const Schema = `CREATE TABLE IF NOT EXISTS events (
	project_id TEXT NOT NULL DEFAULT '1',
	uuid TEXT NOT NULL,
	event TEXT NOT NULL,
	distinct_id TEXT NOT NULL,
	timestamp TEXT NOT NULL,
	properties TEXT NOT NULL,
	PRIMARY KEY (project_id, uuid)
);
CREATE INDEX IF NOT EXISTS events_project_event_timestamp ON events (project_id, event, timestamp);
CREATE INDEX IF NOT EXISTS events_project_timestamp ON events (project_id, timestamp);
CREATE INDEX IF NOT EXISTS events_timestamp ON events (timestamp)`

// Columns are the events table's columns, in order.
var Columns = []engine.Column{
	{Name: "project_id", Kind: engine.Text},
	{Name: "uuid", Kind: engine.Text},
	{Name: "event", Kind: engine.Text},
	{Name: "distinct_id", Kind: engine.Text},
	{Name: "timestamp", Kind: engine.Text},
	{Name: "properties", Kind: engine.Text},
}

// SchemaFor returns the statements that create the events table and its
// indexes on engine e, to run once on an empty database (SQLite's Schema
// also skips what exists). Timestamps are UTC text, as TimeLayout writes
// them, on every engine.
func SchemaFor(e engine.Engine) []string {
	switch e {
	case engine.MySQL:
		// MySQL and MariaDB index no TEXT or BLOB column without a prefix
		// length: the columns an index holds are VARBINARY, binary strings
		// that compare as the engine's text columns (LONGBLOB) do, byte by
		// byte, and the properties stay LONGBLOB.
		return []string{"CREATE TABLE events (project_id VARBINARY(255) NOT NULL, uuid VARBINARY(255) NOT NULL," +
			" event VARBINARY(1000) NOT NULL, distinct_id VARBINARY(1000) NOT NULL, timestamp VARBINARY(64) NOT NULL," +
			" properties LONGBLOB NOT NULL, PRIMARY KEY (project_id, uuid)," +
			" INDEX events_project_event_timestamp (project_id, event, timestamp)," +
			" INDEX events_project_timestamp (project_id, timestamp)," +
			" INDEX events_timestamp (timestamp))"}
	case engine.ClickHouse:
		// A MergeTree table has one order, its sparse index: the tenant
		// first, then the day and the event, which reads of a project's
		// events by time or by event narrow. A read of a time range that
		// is not scoped skips the granules outside it by the minmax index
		// events_timestamp (within a project the granules are in day
		// order, so each spans a few hours).
		return []string{"CREATE TABLE events (project_id String, uuid String, event String, distinct_id String," +
			" timestamp String, properties String, INDEX events_timestamp timestamp TYPE minmax GRANULARITY 1)" +
			" ENGINE = MergeTree ORDER BY (project_id, toDate(timestamp), event)"}
	}
	stmts := []string{e.CreateTable("events", Columns)}
	// Every read of a project's events is scoped to its project_id, so
	// these indexes lead with it: by event and time for insights and
	// counts of an event; by time for ranges, the partial buckets and the
	// live tail of materialized reads. An index without the tenant first
	// would make the planner read every row of the project (the primary
	// key's order) instead. A host that does not scope its reads (one
	// tenant) reads a time range through events_timestamp.
	for _, ix := range []struct {
		name string
		cols []string
	}{
		{"events_project_event_timestamp", []string{"project_id", "event", "timestamp"}},
		{"events_project_timestamp", []string{"project_id", "timestamp"}},
		{"events_timestamp", []string{"timestamp"}},
	} {
		if ddl := e.CreateIndex(ix.name, "events", ix.cols); ddl != "" {
			stmts = append(stmts, ddl)
		}
	}
	return stmts
}

// Value sets the generator draws from.
var (
	Browsers  = []string{"Chrome", "Safari", "Firefox", "Edge", "Opera"}
	OSes      = []string{"Windows", "Mac OS X", "Linux", "iOS", "Android"}
	Countries = []string{"US", "GB", "DE", "FR", "IN", "BR", "JP", "CA", "AU", "NL"}
	Plans     = []string{"free", "starter", "pro", "enterprise"}
	URLs      = []string{
		"https://example.com/", "https://example.com/pricing", "https://example.com/docs",
		"https://example.com/blog", "https://example.com/signup", "https://example.com/checkout",
	}
	EventNames = []string{"$pageview", "$autocapture", "signed_up", "purchase"}
)

// Event is one generated event.
type Event struct {
	UUID       string
	Event      string
	DistinctID string
	Timestamp  time.Time
	Properties Properties
}

// Properties are an event's properties. Amount is set on purchases only and is
// a whole number, so sums are exact whatever order they are added in.
type Properties struct {
	Browser    string `json:"$browser"`
	OS         string `json:"$os"`
	Country    string `json:"country"`
	Plan       string `json:"plan"`
	CurrentURL string `json:"$current_url"`
	Amount     *int64 `json:"amount,omitempty"`
}

// Users is how many distinct users n events are spread over: about 10,000,
// and fewer for small sets.
func Users(n int) int {
	return max(1, min(10000, n/10))
}

// Generate calls fn with n events, the same ones for the same n and seed, in
// time order (events of the same second in the order of their uuids), as
// an events table receives them. It stops at the first error fn returns.
// The events end at End.
func Generate(n int, seed uint64, fn func(Event) error) error {
	return GenerateUntil(n, seed, End, fn)
}

// drawn is what GenerateUntil draws of one event before it sorts them by
// time: 16 bytes an event, so that a million events take 16 MB while they
// are generated.
type drawn struct {
	at     uint32 // seconds after the start
	i      uint32 // the event's number, of its uuid
	user   uint32
	amount uint16 // of a purchase
	url    uint8
	kind   uint8 // its index in EventNames
}

// GenerateUntil is Generate with the events in the Days days before end
// (truncated to its UTC day): the same n, seed and day give the same
// events, and those of another day the same events shifted by whole days.
//
// The events are drawn in the order of their uuids and called in time
// order: an events table is appended to as events happen, so its rows
// (SQLite's rowids, PostgreSQL's heap, MySQL's and MariaDB's pages of
// the table's own order) lie in about time order, and a read of a few
// hours through a time index finds its rows together (the partial buckets
// and the live tail of a materialized endpoint read those hours). Drawn in
// a random order, each row of those hours would lie on a page of its own.
func GenerateUntil(n int, seed uint64, end time.Time, fn func(Event) error) error {
	if n < 0 || uint64(n) > math.MaxUint32 {
		return fmt.Errorf("demo: %d events: the generator makes between 0 and %d", n, uint64(math.MaxUint32))
	}
	end = Day(end)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	users := Users(n)
	type user struct{ browser, os, country, plan string }
	people := make([]user, users)
	for i := range people {
		people[i] = user{
			browser: pick(rng, Browsers, 0.45),
			os:      pick(rng, OSes, 0.35),
			country: pick(rng, Countries, 0.3),
			plan:    pick(rng, Plans, 0.5),
		}
	}
	start := end.Add(-Days * 24 * time.Hour).Unix()
	span := int64(Days * 24 * 60 * 60)
	events := make([]drawn, n)
	for i := range events {
		// The draws of an event, in the order they have always been
		// drawn in, so that a seed gives the events it gave before they
		// were sorted.
		d := drawn{i: uint32(i)}
		d.user = uint32(rng.IntN(users))
		d.at = uint32(rng.Int64N(span))
		d.url = uint8(rng.IntN(len(URLs)))
		switch r := rng.Float64(); {
		case r < 0.60:
			d.kind = 0
		case r < 0.85:
			d.kind = 1
		case r < 0.90:
			d.kind = 2
		default:
			d.kind = 3
			d.amount = uint16(1 + rng.Int64N(500))
		}
		events[i] = d
	}
	slices.SortFunc(events, func(a, b drawn) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.i, b.i))
	})
	for _, d := range events {
		p := people[d.user]
		e := Event{
			UUID:       fmt.Sprintf("00000000-0000-4000-8000-%012x", d.i),
			Event:      EventNames[d.kind],
			DistinctID: fmt.Sprintf("user-%05d", d.user),
			Timestamp:  time.Unix(start+int64(d.at), 0).UTC(),
			Properties: Properties{
				Browser: p.browser, OS: p.os, Country: p.country, Plan: p.plan,
				CurrentURL: URLs[d.url],
			},
		}
		if d.kind == 3 {
			amount := int64(d.amount)
			e.Properties.Amount = &amount
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// Day is the start of t's UTC day: the end a generation takes.
func Day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// pick draws from values, the first one with probability head and the rest
// evenly, so that breakdowns have a clear leader.
func pick(rng *rand.Rand, values []string, head float64) string {
	if rng.Float64() < head {
		return values[0]
	}
	return values[1+rng.IntN(len(values)-1)]
}

// batch is how many rows one INSERT carries: large enough to load a million
// rows in seconds, small enough for every engine's limit on bound arguments.
const batch = 150

// Load creates the events table on SQLite (see Schema) and inserts n
// generated events of project "1" in one transaction.
func Load(ctx context.Context, db *sql.DB, n int, seed uint64) error {
	return LoadUntil(ctx, db, n, seed, End)
}

// LoadUntil is Load with the events of GenerateUntil(n, seed, end): the
// same events, shifted by whole days to end at end's day.
func LoadUntil(ctx context.Context, db *sql.DB, n int, seed uint64, end time.Time) error {
	for _, stmt := range strings.Split(Schema, ";") {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("demo: create schema: %w", err)
		}
	}
	return insertTx(ctx, db, engine.SQLite, "1", n, seed, end)
}

// Insert inserts n generated events of project into the events table of
// db, whose engine is e, in one transaction. Every value is bound. The
// events end at End.
func Insert(ctx context.Context, db *sql.DB, e engine.Engine, project string, n int, seed uint64) error {
	return insertTx(ctx, db, e, project, n, seed, End)
}

// insertTx inserts the events of GenerateUntil(n, seed, end) of project
// into db, whose engine is e, in one transaction.
func insertTx(ctx context.Context, db *sql.DB, e engine.Engine, project string, n int, seed uint64, end time.Time) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("demo: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	err = InsertUntil(ctx, txExec{tx}, e, project, n, seed, end)
	if err != nil {
		return err
	}
	return tx.Commit()
}

// Loader runs one statement of the host's own, with bound arguments in an
// engine's markers: the Load of package endpoint/chexec, endpoint/chdb and
// endpoint/sqlexec executors (the Service never calls it; a
// driver.Executor runs only statements the Service made).
type Loader interface {
	Load(ctx context.Context, query string, args []any) error
}

// txExec is a database/sql transaction as a Loader: it names the
// arguments where the engine's parameters are named, as database/sql
// drivers take them.
type txExec struct{ tx *sql.Tx }

func (x txExec) Load(ctx context.Context, query string, args []any) error {
	_, err := x.tx.ExecContext(ctx, query, args...)
	return err
}

// InsertWith inserts n generated events of project through x, whose
// engine is e, in batches; every value is bound. It suits executors that
// are not database/sql (chDB, clickhouse-go). The events end at End.
func InsertWith(ctx context.Context, x Loader, e engine.Engine, project string, n int, seed uint64) error {
	return InsertUntil(ctx, x, e, project, n, seed, End)
}

// InsertUntil is InsertWith with the events of GenerateUntil(n, seed,
// end).
func InsertUntil(ctx context.Context, x Loader, e engine.Engine, project string, n int, seed uint64, end time.Time) error {
	_, named := x.(txExec)
	rows := make([][]any, 0, batch)
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		q, args, err := insertSQL(e, rows, named)
		if err != nil {
			return err
		}
		if err := x.Load(ctx, q, args); err != nil {
			return fmt.Errorf("demo: insert: %w", err)
		}
		rows = rows[:0]
		return nil
	}
	err := GenerateUntil(n, seed, end, func(ev Event) error {
		props, err := json.Marshal(ev.Properties)
		if err != nil {
			return err
		}
		rows = append(rows, []any{project, ev.UUID, ev.Event, ev.DistinctID, ev.Timestamp.Format(TimeLayout), string(props)})
		if len(rows) == batch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	return err
}

// insertSQL is one INSERT of rows in e's markers, with the arguments as
// the engine binds them, as sql.NamedArg where its parameters are named and
// named is set (database/sql drivers).
func insertSQL(e engine.Engine, rows [][]any, named bool) (string, []any, error) {
	q := []byte("INSERT INTO events (project_id, uuid, event, distinct_id, timestamp, properties) VALUES ")
	args := make([]any, 0, len(rows)*len(Columns))
	for i, row := range rows {
		if i > 0 {
			q = append(q, ", "...)
		}
		q = append(q, '(')
		for j, v := range row {
			if j > 0 {
				q = append(q, ", "...)
			}
			arg, typ, err := e.Arg(v)
			if err != nil {
				return "", nil, fmt.Errorf("demo: insert: %w", err)
			}
			n := len(args) + 1
			if name := e.ArgName(n); name != "" && named {
				arg = sql.Named(name, arg)
			}
			args = append(args, arg)
			q = e.Marker(q, n, typ)
		}
		q = append(q, ')')
	}
	return string(q), args, nil
}
