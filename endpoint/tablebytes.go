package endpoint

import (
	"context"
	"fmt"
	"strings"

	"github.com/endpointkit/endpointkit/sql/scope"
)

// LimitMaxMaterializedBytes is Config.MaxMaterializedBytes, in bytes, as
// an *Error's Limit names it.
const LimitMaxMaterializedBytes = "max_materialized_bytes"

// tableBytesSQL returns the statement that measures what table takes in
// the database of engine name, "" for an engine the Service cannot
// measure:
//
//   - SQLite: the pages of the table in the dbstat virtual table (which
//     the SQLite build must have: modernc.org/sqlite has it);
//   - PostgreSQL: pg_total_relation_size (heap, TOAST and indexes);
//   - MySQL and MariaDB: data_length + index_length of
//     information_schema.tables, after ANALYZE TABLE has read the
//     table's statistics again (MySQL 8 also caches them: set
//     information_schema_stats_expiry to 0 for the session, see
//     sqlexec.WithSession);
//   - ClickHouse: bytes_on_disk of the table's active parts on the
//     server the query reaches (on a cluster, that server's shard only).
//
// The table's name is the library's own (materialize.TableName): letters,
// digits and underscores, which a string literal holds as they are.
func tableBytesSQL(engine, table string) string {
	lit := "'" + strings.ReplaceAll(table, "'", "''") + "'"
	switch engine {
	case "sqlite":
		return "SELECT coalesce(sum(pgsize), 0) AS bytes FROM dbstat WHERE name = " + lit
	case "postgresql":
		return "SELECT pg_total_relation_size(" + lit + "::regclass) AS bytes"
	case "mysql":
		return "SELECT coalesce(sum(data_length + index_length), 0) AS bytes FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = " + lit
	case "clickhouse":
		return "SELECT sum(bytes_on_disk) AS bytes FROM system.parts WHERE active AND database = currentDatabase() AND table = " + lit
	}
	return ""
}

// checkBytes measures next, a table a refresh built, and refuses it when
// it takes more than Config.MaxMaterializedBytes. It returns the size,
// nil when the engine cannot be measured (the refresh then goes on: the
// row bound still holds) or when there is no bound.
func (s *Service) checkBytes(ctx context.Context, next string) (*int64, error) {
	max := s.cfg.MaxMaterializedBytes
	q := tableBytesSQL(s.cfg.Executor.Engine().Name(), next)
	if max <= 0 || q == "" {
		return nil, nil
	}
	if eng := s.cfg.Executor.Engine(); eng.Name() == "mysql" {
		// InnoDB's sizes in information_schema are those of its last
		// statistics, which a table just built may not have yet.
		if err := s.execAll(ctx, []scope.Statement{scope.Own("ANALYZE TABLE " + eng.QuoteIdent(next))}, false); err != nil {
			return nil, fmt.Errorf("endpoint: measuring %s: %w", next, err)
		}
	}
	res, err := s.queryOwn(ctx, scope.Own(q))
	if err != nil {
		return nil, fmt.Errorf("endpoint: measuring %s: %w", next, err)
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
		return nil, fmt.Errorf("endpoint: measuring %s: %d rows", next, len(res.Rows))
	}
	n, ok := asInt64(res.Rows[0][0])
	if !ok {
		return nil, fmt.Errorf("endpoint: measuring %s: %v (%T) is not a size", next, res.Rows[0][0], res.Rows[0][0])
	}
	if n > max {
		return &n, limited(NewError(ErrExecution, CodeMaterializationFailed, "",
			fmt.Sprintf("the stored table took %d bytes, more than max_materialized_bytes (%d)", n, max)), LimitMaxMaterializedBytes, max)
	}
	return &n, nil
}
