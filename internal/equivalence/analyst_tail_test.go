package equivalence

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
)

// analystQuery is the analyst query named name.
func analystQuery(t *testing.T, name string) *analyst {
	t.Helper()
	for _, q := range analystQueries() {
		if q.name == name {
			return q
		}
	}
	require.FailNow(t, "no analyst query "+name)
	return nil
}

// TestAnalystTailColumnRefused: a live tail on a column the query's FROM
// does not give is refused when it is saved, with an error that names the
// column and what the FROM gives, instead of a refresh the engine refuses
// (MariaDB: "Unknown column 'timestamp' in 'WHERE'") or, on SQLite, reads
// as the text 'timestamp' and so stores nothing. cohort_first_seen_outer
// reads a derived table of one row per user (distinct_id, first_day): its
// source's time column is not among them. A column the FROM gives, and
// one of a derived table that passes the source's rows through
// (derived_rows_range's e.timestamp), are saved; so is any column of a
// table whose columns the query does not show (the engine decides).
func TestAnalystTailColumnRefused(t *testing.T) {
	ctx := context.Background()
	svc := targets[0].services(t, []storage{asText}, 0)[asText]
	cohort, rows := analystQuery(t, "cohort_first_seen_outer"), analystQuery(t, "derived_rows_range")
	for _, tc := range []struct {
		q      *analyst
		tail   string
		refuse string // the error's detail names it; "" when saved
	}{
		{cohort, "timestamp", "'timestamp' is not a column of the query's FROM"},
		{cohort, "f.timestamp", "'f.timestamp' is not a column of the query's FROM"},
		{cohort, "x.first_day", "no table or alias named 'x'"},
		{cohort, "first_day", ""},
		{cohort, "f.first_day", ""},
		{rows, "e.timestamp", ""},
		{rows, "timestamp", ""},
		{rows, "e.uuid", "'e.uuid' is not a column of the query's FROM"},
		{analystQuery(t, "funnel_self_join"), "a.timestamp", ""},
		{analystQuery(t, "funnel_self_join"), "z.timestamp", "no table or alias named 'z'"},
		// Materialized at its subquery's grain: the tail is that FROM's.
		{analystQuery(t, "derived_not_keyed"), "timestamp", ""},
		{analystQuery(t, "derived_not_keyed"), "u.n", "no table or alias named 'u'"},
	} {
		name := tc.q.name + "_" + strings.ReplaceAll(tc.tail, ".", "_")
		_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: name, Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: tc.q.sql(sqliteDialect), Variables: refs(tc.q.vars)}})
		require.NoError(t, err, name)
		yes, tail := true, tc.tail
		_, err = svc.Update(ctx, "1", name, endpoint.UpdateRequest{IsMaterialized: &yes, MaterializationTail: &tail})
		if tc.refuse == "" {
			assert.NoError(t, err, name)
			continue
		}
		var e *endpoint.Error
		if assert.True(t, errors.As(err, &e), "%s: want an *endpoint.Error, got %v", name, err) {
			assert.Equal(t, endpoint.CodeInvalidInput, e.Code, name)
			assert.Equal(t, "materialization_tail_column", e.Attr, name)
			assert.Contains(t, e.Detail, tc.refuse, name)
			if tc.q == cohort {
				assert.Contains(t, e.Detail, "f (distinct_id, first_day)", name)
			}
		}
	}
}
