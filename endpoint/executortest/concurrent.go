package executortest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/placeholder"
)

const (
	workers    = 8
	iterations = 25
)

// testConcurrentQuery: the Service runs every request's query on one
// executor at once; each must get its own answer, and -race must stay
// quiet.
func testConcurrentQuery(t *testing.T, x driver.Executor, f Fixture) {
	tb := filledTable(t, x, f)
	type statement struct {
		sql  string
		args []any
		want [][]any
	}
	stmts := make([]statement, len(fixtureRows))
	for i, r := range fixtureRows {
		q, args := tb.sql(t, func(b *placeholder.Builder, table string) {
			b.WriteString("SELECT name, score FROM " + table + " WHERE id = ")
			b.Bind(r.id)
		})
		stmts[i] = statement{q, args, [][]any{{r.name, r.score}}}
	}
	d := x.Engine()
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					errs <- fmt.Errorf("worker %d panicked: %v", w, p)
				}
			}()
			for i := range iterations {
				s := stmts[(w+i)%len(stmts)]
				if got := x.Engine(); got != d {
					errs <- fmt.Errorf("worker %d: Engine() = %v, want %v", w, got, d)
					return
				}
				res, err := x.Query(context.Background(), stmt.New(s.sql, append([]any(nil), s.args...)), driver.Bounds{})
				switch {
				case err != nil:
					errs <- fmt.Errorf("worker %d: Query(%q, %q): %v", w, s.sql, s.args, err)
					return
				case res == nil || !sameRows(res.Rows, s.want):
					errs <- fmt.Errorf("worker %d: Query(%q, %q) = %v, want rows %s", w, s.sql, s.args, res, describe(s.want))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
