package httpapi_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// kindsEndpoint runs setup on db, then formatEndpoint.
func kindsEndpoint(t *testing.T, db *sql.DB, eng engine.Engine, setup []string, name, query string) (*endpoint.Service, *harness, string) {
	t.Helper()
	for _, q := range setup {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	return formatEndpoint(t, db, eng, name, query)
}

// numberKinds is, per column, the JSON kinds of a JSON answer's numbers:
// "i" for an integer's text (256), "f" for a float's (256.0, 2.5e-07), one
// letter per kind met, "" for a column of no number.
func numberKinds(rows [][]any) []string {
	if len(rows) == 0 {
		return nil
	}
	out := make([]string, len(rows[0]))
	for _, row := range rows {
		for i, v := range row {
			n, ok := v.(json.Number)
			if !ok {
				continue
			}
			k := "i"
			if strings.ContainsAny(string(n), ".eE") {
				k = "f"
			}
			if !strings.Contains(out[i], k) {
				out[i] += k
			}
		}
	}
	return out
}

// ndjsonKinds is numberKinds of an NDJSON answer's lines, in the order of
// columns.
func ndjsonKinds(t *testing.T, r raw, columns []string) []string {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var rows [][]any
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	for dec.More() {
		var obj map[string]any
		require.NoError(t, dec.Decode(&obj))
		row := make([]any, len(columns))
		for i, c := range columns {
			row[i] = obj[c]
		}
		rows = append(rows, row)
	}
	return numberKinds(rows)
}

// parquetKinds are the physical types of a Parquet answer's columns.
func parquetKinds(t *testing.T, r raw) []string {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	f, err := pq.OpenFile(bytes.NewReader(r.body), int64(len(r.body)))
	require.NoError(t, err)
	var out []string
	for _, c := range f.Schema().Fields() {
		out = append(out, c.Type().Kind().String())
	}
	return out
}

// TestAnswerKindsPostgresMaterialized: on PostgreSQL, sum(length(...)) is
// an integer column whose re-aggregation in the stored table is NUMERIC;
// its JSON values are integers inline and materialized, in JSON and
// NDJSON, computed and cached, and Parquet keeps it INT64; the average,
// a float column, writes every value as a float (256.0 beside 256.5).
func TestAnswerKindsPostgresMaterialized(t *testing.T) {
	svc, h, run := kindsEndpoint(t, testdb.Postgres(t), engine.PostgreSQL, []string{
		"CREATE TABLE kt (grp text, distinct_id text, amount double precision)",
		"INSERT INTO kt VALUES ('a', 'user-1', 256), ('a', 'user-22', 256), ('b', 'user-333', 256), ('b', 'u', 257)",
	}, "lens", "SELECT grp, sum(length(distinct_id)) AS total, avg(amount) AS mean FROM kt GROUP BY grp ORDER BY grp")
	want := []string{"", "i", "f"}
	check := func(stage string, materialized bool) {
		t.Helper()
		for _, refresh := range []string{"force", "cache"} {
			a := decodeAnswer(t, h.post(run, keyP1, `{"refresh": "`+refresh+`"}`))
			require.Len(t, a.Results, 2, "%s %s", stage, refresh)
			assert.Equal(t, want, numberKinds(a.Results), "%s %s: JSON %v", stage, refresh, a.Results)
			assert.Equal(t, want, ndjsonKinds(t, h.post(run, keyP1, `{"refresh": "`+refresh+`", "format": "ndjson"}`), a.Columns), "%s %s: NDJSON", stage, refresh)
			assert.Equal(t, []string{"BYTE_ARRAY", "INT64", "DOUBLE"}, parquetKinds(t, h.post(run, keyP1, `{"refresh": "`+refresh+`", "format": "parquet"}`)), "%s %s: Parquet", stage, refresh)
		}
		var got struct {
			Materialized bool `json:"endpoint_materialized"`
		}
		require.NoError(t, json.Unmarshal(h.post(run, keyP1, `{"refresh": "force"}`).body, &got))
		assert.Equal(t, materialized, got.Materialized, stage)
	}
	check("inline", false)
	yes := true
	ctx := context.Background()
	_, err := svc.Update(ctx, "1", "lens", endpoint.UpdateRequest{IsMaterialized: &yes})
	require.NoError(t, err)
	require.NoError(t, svc.Materialize(ctx, "1", "lens"))
	check("materialized", true)
}

// TestFloatColumnOneJSONKind: on SQLite, a REAL average whose value is
// integral in one row (256) and not in another (256.5) writes both as
// floats (256.0), in the JSON answer and NDJSON, computed and cached, and
// Parquet types it DOUBLE.
func TestFloatColumnOneJSONKind(t *testing.T) {
	_, h, run := kindsEndpoint(t, openEvents(t, 0), engine.SQLite, []string{
		"CREATE TABLE kt (grp TEXT, amount REAL)",
		"INSERT INTO kt VALUES ('a', 256), ('a', 256), ('b', 256), ('b', 257)",
	}, "means", "SELECT grp, avg(amount) AS mean, count(*) AS n FROM kt GROUP BY grp ORDER BY grp")
	want := []string{"", "f", "i"}
	for _, refresh := range []string{"force", "cache"} {
		r := h.post(run, keyP1, `{"refresh": "`+refresh+`"}`)
		a := decodeAnswer(t, r)
		require.Len(t, a.Results, 2)
		assert.Equal(t, want, numberKinds(a.Results), "%s: JSON %s", refresh, r.body)
		assert.Contains(t, string(r.body), `[["a",256.0,2],["b",256.5,2]]`, refresh)
		assert.Equal(t, want, ndjsonKinds(t, h.post(run, keyP1, `{"refresh": "`+refresh+`", "format": "ndjson"}`), a.Columns), "%s: NDJSON", refresh)
		assert.Equal(t, []string{"BYTE_ARRAY", "DOUBLE", "INT64"}, parquetKinds(t, h.post(run, keyP1, `{"refresh": "`+refresh+`", "format": "parquet"}`)), "%s: Parquet", refresh)
	}
}
