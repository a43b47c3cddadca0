package sqlstore

import (
	"context"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statementTexts returns every statement of q by field name.
func statementTexts(q statements) map[string]string {
	out := map[string]string{}
	v := reflect.ValueOf(q)
	for i := 0; i < v.NumField(); i++ {
		out[v.Type().Field(i).Name] = v.Field(i).String()
	}
	return out
}

// TestStatementsPrepareOnSQLite compiles every statement against the
// migrated schema, so that a typo in a rarely used one fails here.
func TestStatementsPrepareOnSQLite(t *testing.T) {
	s := openMemory(t)
	for name, q := range statementTexts(s.q) {
		if name == "varGetMany" {
			q += "?)"
		}
		st, err := s.db.PrepareContext(context.Background(), q)
		if !assert.NoError(t, err, "%s: %s", name, q) {
			continue
		}
		st.Close()
	}
}

// TestStatementsMarkersPerDialect checks that PostgreSQL's statements
// number their markers 1..n where SQLite's have n '?', and that MySQL's
// equal SQLite's apart from the row lock.
func TestStatementsMarkersPerDialect(t *testing.T) {
	lite := statementTexts(newStatements(engine.SQLite))
	pg := statementTexts(newStatements(engine.PostgreSQL))
	my := statementTexts(newStatements(engine.MySQL))
	numbered := regexp.MustCompile(`\$(\d+)`)
	for name, q := range lite {
		if name == "varGetMany" {
			continue // a prefix, rebound with its list; see TestGetManySQL
		}
		n := strings.Count(q, "?")
		var got []string
		for _, m := range numbered.FindAllStringSubmatch(pg[name], -1) {
			got = append(got, m[1])
		}
		var want []string
		for i := 1; i <= n; i++ {
			want = append(want, strconv.Itoa(i))
		}
		assert.Equal(t, want, got, "%s: %s", name, pg[name])
		assert.NotContains(t, pg[name], "?", "%v", name)
		if got, want := strings.Count(my[name], "?"), strings.Count(q, "?"); got != want {
			t.Errorf("%v: strings.Count(my[name], \"?\") = %v, want %v", name, got, want)
		}
	}
	assert.True(t, strings.HasSuffix(my["epCurrentVersion"], " FOR UPDATE"), "strings.HasSuffix(my[\"epCurrentVersion\"], \" FOR UPDATE\") is false")
	assert.True(t, strings.HasSuffix(pg["epCurrentVersion"], " FOR UPDATE"), "strings.HasSuffix(pg[\"epCurrentVersion\"], \" FOR UPDATE\") is false")
	assert.NotContains(t, lite["epCurrentVersion"], "FOR UPDATE")
	assert.True(t, strings.HasSuffix(pg["varLock"], " FOR UPDATE"), "strings.HasSuffix(pg[\"varLock\"], \" FOR UPDATE\") is false")
	assert.NotContains(t, lite["varLock"], "FOR UPDATE")
	require.Contains(t, pg["epMarkExecuted"], `last_executed_at COLLATE "C" <`)
}

func TestGetManySQL(t *testing.T) {
	tests := []struct {
		dialect engine.Store
		n       int
		suffix  string
	}{
		{engine.SQLite, 1, "project = ? AND id IN (?)"},
		{engine.SQLite, 3, "project = ? AND id IN (?, ?, ?)"},
		{engine.MySQL, 2, "project = ? AND id IN (?, ?)"},
		{engine.PostgreSQL, 3, "project = $1 AND id IN ($2, $3, $4)"},
	}
	for _, tt := range tests {
		s := &Store{dialect: tt.dialect, q: newStatements(tt.dialect)}
		got := (*variables)(s).getManySQL(tt.n)
		assert.True(t, strings.HasSuffix(got, tt.suffix), "%s: %s: strings.HasSuffix(got, tt.suffix) is false", tt.dialect.Name(), got)
	}
}
