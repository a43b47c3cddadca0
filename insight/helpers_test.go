package insight

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

// testEvent is an event of the oracle's data set. Properties hold JSON
// values as encoding/json decodes them; a missing key is a missing property.
type testEvent struct {
	event string
	actor string
	ts    time.Time
	props map[string]any
}

// oracleStart and oracleEnd bound the generated events.
var (
	oracleStart = time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	oracleEnd   = time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
)

// genEvents makes n events meant to find edge cases: properties missing,
// empty, JSON null, numbers that are strings, floats with exact binary
// sums, mixed-case text.
func genEvents(n int, seed uint64) []testEvent {
	rng := rand.New(rand.NewPCG(seed, 99))
	browsers := []any{"Chrome", "Safari", "Firefox", "", nil, "missing"}
	oses := []any{"Mac OS X", "Windows", "Linux", "missing"}
	urls := []string{"https://Example.com/Pricing", "https://example.com/docs", "https://shop.example.org/cart"}
	events := []string{"$pageview", "$pageview", "$pageview", "signed_up", "purchase"}
	span := oracleEnd.Sub(oracleStart) / time.Second
	out := make([]testEvent, n)
	for i := range out {
		e := testEvent{
			event: events[rng.IntN(len(events))],
			actor: fmt.Sprintf("u%02d", rng.IntN(40)),
			ts:    oracleStart.Add(time.Duration(rng.Int64N(int64(span))) * time.Second),
			props: map[string]any{},
		}
		if b := browsers[rng.IntN(len(browsers))]; b != "missing" {
			e.props["$browser"] = b
		}
		if o := oses[rng.IntN(len(oses))]; o != "missing" {
			e.props["$os"] = o
		}
		e.props["url"] = urls[rng.IntN(len(urls))]
		switch rng.IntN(6) {
		case 0, 1, 2:
			e.props["amount"] = float64(rng.IntN(400)) * 0.25
		case 3:
			e.props["amount"] = "12" // text, not a number: never aggregated
		case 4:
			e.props["amount"] = float64(rng.IntN(50))
		}
		out[i] = e
	}
	return out
}

// eventsDB returns an SQLite database (testdb.SQLite) holding the events.
func eventsDB(t testing.TB, events []testEvent) *sql.DB {
	t.Helper()
	db := testdb.SQLite(t)
	for _, stmt := range strings.Split(demo.Schema, ";") {
		_, err := db.Exec(stmt)
		require.NoError(t, err)
	}
	tx, err := db.Begin()
	require.NoError(t, err)
	for i, e := range events {
		props, err := json.Marshal(e.props)
		require.NoError(t, err)
		_, err = tx.Exec(`INSERT INTO events (uuid, event, distinct_id, timestamp, properties) VALUES (?, ?, ?, ?, ?)`,
			fmt.Sprintf("e%06d", i), e.event, e.actor, e.ts.Format("2006-01-02 15:04:05"), string(props))
		require.NoError(t, err)
	}
	require.NoError(t, tx.Commit())
	return db
}

// queryRows runs a statement and returns its rows as database/sql gives them.
func queryRows(t testing.TB, db *sql.DB, query string, args []any) [][]any {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), query, args...)
	require.NoError(t, err, "%v", query)
	return testdb.Rows(t, rows)
}

// run compiles q at now, runs it on db and shapes the rows.
func run(t testing.TB, db *sql.DB, q *Query, now time.Time) *Result {
	t.Helper()
	c, err := Compile(q, engine.SQLite, now)
	require.NoError(t, err)
	res, err := c.Shape(queryRows(t, db, c.SQL, c.Args))
	require.NoError(t, err)
	return res
}

// requireRefused checks that Decode refuses text with an *Error wrapping
// ErrInvalid whose message holds want.
func requireRefused(t *testing.T, text, want string) {
	t.Helper()
	q, err := Decode([]byte(text))
	require.Nil(t, q, "q")
	require.ErrorContains(t, err, want)
	require.ErrorIs(t, err, ErrInvalid)
	var e *Error
	require.ErrorAs(t, err, &e)
}

// mustDecode decodes a query written as JSON in a test.
func mustDecode(t testing.TB, text string) *Query {
	t.Helper()
	q, err := Decode([]byte(text))
	require.NoError(t, err, "%v", text)
	return q
}
