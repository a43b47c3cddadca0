package testdb

import (
	"database/sql"
	"testing"
)

// Rows reads rows to the end and closes them, as a hand-written caller
// does: Scan into []any, with []byte values (MySQL's text, SQLite's
// blobs) turned into strings. It fails t on an error of the read.
func Rows(t testing.TB, rows *sql.Rows) [][]any {
	t.Helper()
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatalf("testdb: reading the columns: %v", err)
	}
	out := [][]any{}
	for rows.Next() {
		row := make([]any, len(cols))
		dest := make([]any, len(cols))
		for i := range row {
			dest[i] = &row[i]
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatalf("testdb: scanning row %d: %v", len(out)+1, err)
		}
		for i, v := range row {
			if raw, ok := v.([]byte); ok {
				row[i] = string(raw)
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("testdb: reading the rows: %v", err)
	}
	return out
}
