package demo

import (
	"context"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/internal/testdb"
)

func TestHandWrittenHandler(t *testing.T) {
	db := testdb.SQLite(t)
	require.NoError(t, Load(context.Background(), db, 500, 7))
	var n int
	require.NoError(t, db.QueryRow("SELECT count(*) FROM events WHERE project_id = '1' AND event = 'purchase'").Scan(&n))
	require.NotEqual(t, 0, n, "no purchase in the demo events: the count case proves nothing")
	h := HandWrittenHandler(db, "k")
	for _, c := range []struct {
		path, key, body string
		status          int
		want            string
	}{
		{"/api/projects/1/endpoints/select1/run", "k", `{"variables": {}}`, 200, `{"columns":["1"],"results":[[1]]}`},
		{"/api/projects/1/endpoints/count/run", "k", `{"variables": {"name": "purchase"}}`, 200, `"results":[[` + strconv.Itoa(n) + `]]`},
		{"/api/projects/1/endpoints/count/run", "k", `{"variables": {"name": 1}}`, 400, "bad variable"},
		{"/api/projects/1/endpoints/count/run", "k", `{`, 400, "bad body"},
		{"/api/projects/1/endpoints/count/run", "other", `{"variables": {"name": "purchase"}}`, 401, "unauthorized"},
		{"/api/projects/2/endpoints/select1/run", "k", `{"variables": {}}`, 401, "unauthorized"},
	} {
		req := httptest.NewRequest("POST", c.path, strings.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer "+c.key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if assert.Equal(t, c.status, rec.Code, "%s %s: %d %s, want %d with %s", c.path, c.body, rec.Code, rec.Body, c.status, c.want) {
			assert.Contains(t, rec.Body.String(), c.want, "%s %s: %d %s, want %d with %s", c.path, c.body, rec.Code, rec.Body, c.status, c.want)
		}
	}
}
