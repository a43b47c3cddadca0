package endpoint

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// The words of MaterializationReport.EdgeIndex (and of
// driver.MaterializationState.EdgeIndex): what the latest refresh found of
// the reads of the source that runs make beside the stored table.
const (
	// EdgeIndexUsed: the engine reads each through an index.
	EdgeIndexUsed = "used"
	// EdgeIndexNotUsed: the engine scans a table for one of them, so runs
	// of a range off its buckets' boundaries (or with the live tail) read
	// the whole table there; MaterializationReport.EdgeIndexWarning says
	// which and what index would serve.
	EdgeIndexNotUsed = "not_used"
	// EdgeIndexNotChecked: the engine's plans are not read (ClickHouse,
	// whose sparse index is its table's order).
	EdgeIndexNotChecked = "not_checked"
	// EdgeIndexCheckFailed: the engine did not answer the plan's question;
	// the refresh itself completed.
	EdgeIndexCheckFailed = "check_failed"
)

// edgeAdvice is what a warning of EdgeIndexNotUsed tells the host to do.
const edgeAdvice = "give the source table an index on its time column (after the tenant column where reads are scoped to a project)"

// checkEdges asks the engine's plan (driver.Explainer) of each read of the source that runs
// of v's plan make beside the stored table (materialize.Plan.EdgeProbes),
// once a refresh, as of its build instant at: it returns the
// driver.MaterializationState.EdgeIndex word and note, "" when runs read
// no source beside the table. A check that fails is logged; the refresh
// it belongs to does not fail.
func (s *Service) checkEdges(ctx context.Context, v *verdict, at time.Time) (string, string) {
	if v == nil || v.scoped == nil {
		return "", ""
	}
	probes, err := v.scoped.EdgeProbes(at)
	if err != nil {
		slog.WarnContext(ctx, "endpoint: the reads of a materialized endpoint's source could not be written for their query plan", "error", err)
		return EdgeIndexCheckFailed, "the reads of the source beside the stored table could not be written to ask the engine's plan of them"
	}
	if len(probes) == 0 {
		return "", ""
	}
	e := s.cfg.Executor.Engine()
	x, ok := s.cfg.Executor.(driver.Explainer)
	switch {
	case !plansRead(e):
		return EdgeIndexNotChecked, "the query plans of " + e.DisplayName() + " are not checked; " + edgeAdvice + ", so that the partial buckets and the live tail read a few hours of rows"
	case !ok:
		return EdgeIndexNotChecked, "the executor does not show the engine's query plans, so they are not checked; " + edgeAdvice + ", so that the partial buckets and the live tail read a few hours of rows"
	}
	var scans []string
	for _, pr := range probes {
		res, err := x.Explain(ctx, pr.Statement)
		var scan string
		if err == nil {
			scan, err = planScan(e, res)
		}
		if err != nil {
			slog.WarnContext(ctx, "endpoint: the query plan of a materialized endpoint's source read could not be read", "read", pr.Name, "error", err)
			return EdgeIndexCheckFailed, "the engine's query plan of " + pr.Name + " could not be read"
		}
		if scan != "" {
			scans = append(scans, pr.Name+" reads "+scan)
		}
	}
	if len(scans) > 0 {
		return EdgeIndexNotUsed, "no index serves the reads of the source beside the stored table: " + strings.Join(scans, "; ") +
			", so runs of a range off its buckets' boundaries read the whole table there; " + edgeAdvice
	}
	return EdgeIndexUsed, ""
}

// plansRead reports whether planScan reads the plans of e.
func plansRead(e engine.Engine) bool {
	_, form := e.Explain()
	return form != engine.PlanNone
}

// planScan reads the engine's plan of one probe, in the form
// driver.Explainer gives it, and returns the table it reads whole, "" when every table is read
// through an index.
func planScan(e engine.Engine, res *driver.Result) (string, error) {
	switch _, form := e.Explain(); form {
	case engine.PlanSQLite:
		return sqliteScan(res)
	case engine.PlanPostgresJSON:
		return postgresScan(res)
	case engine.PlanMySQL:
		return mysqlScan(res)
	}
	return "", fmt.Errorf("no reader of the plans of %s", e.Name())
}

// planText returns a value of a plan's row as text.
func planText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// noRange is how planScan words a table read through an index without a
// range: every row of the tenant, or of a constant filter's value.
const noRange = " through an index without a range on the time"

// hasRange reports whether an index condition, as an engine prints it,
// holds a range (the probes' only ranges are on the time).
func hasRange(cond string) bool { return strings.ContainsAny(cond, "<>") }

// sqliteScan reads EXPLAIN QUERY PLAN (id, parent, notused, detail): a
// step "SCAN t" (with or without an index: a whole index is no range) of a
// table, not of a subquery or a co-routine, reads t whole; "SEARCH t ...
// (constraints)" reads a range when a constraint is one.
func sqliteScan(res *driver.Result) (string, error) {
	if len(res.Columns) < 4 {
		return "", fmt.Errorf("EXPLAIN QUERY PLAN answered %d columns, want 4", len(res.Columns))
	}
	inner := map[string]bool{}
	var details []string
	for _, row := range res.Rows {
		if len(row) < 4 {
			return "", fmt.Errorf("EXPLAIN QUERY PLAN answered a row of %d values, want 4", len(row))
		}
		d := planText(row[3])
		details = append(details, d)
		for _, p := range []string{"CO-ROUTINE ", "MATERIALIZE "} {
			if name, ok := strings.CutPrefix(d, p); ok {
				inner[name] = true
			}
		}
	}
	for _, d := range details {
		verb, rest, _ := strings.Cut(d, " ")
		rest = strings.TrimPrefix(rest, "TABLE ") // SQLite before 3.36
		name, how, _ := strings.Cut(rest, " ")
		if verb != "SCAN" && verb != "SEARCH" || name == "" || rest == "CONSTANT ROW" || strings.HasPrefix(rest, "(") || inner[name] {
			continue
		}
		switch {
		case verb == "SCAN":
			return "the table " + name + " whole", nil
		case !hasRange(how):
			return "the table " + name + noRange + " (" + how + ")", nil
		}
	}
	return "", nil
}

// postgresScan reads EXPLAIN (FORMAT JSON): a Seq Scan node reads its
// relation whole, and an index scan without a range in its condition
// (Index Cond, of the Bitmap Index Scan under a Bitmap Heap Scan) reads
// every row of an equality.
func postgresScan(res *driver.Result) (string, error) {
	if len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
		return "", fmt.Errorf("EXPLAIN (FORMAT JSON) answered %d rows", len(res.Rows))
	}
	var plans []struct {
		Plan pgPlan `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(planText(res.Rows[0][0])), &plans); err != nil {
		return "", fmt.Errorf("EXPLAIN (FORMAT JSON): %w", err)
	}
	for _, p := range plans {
		if scan := p.Plan.scan(); scan != "" {
			return scan, nil
		}
	}
	return "", nil
}

// pgPlan is a node of PostgreSQL's JSON plan, as far as postgresScan reads
// it.
type pgPlan struct {
	NodeType  string   `json:"Node Type"`
	Relation  string   `json:"Relation Name"`
	IndexName string   `json:"Index Name"`
	IndexCond string   `json:"Index Cond"`
	Plans     []pgPlan `json:"Plans"`
}

// scan returns how the first table of p read without a range is read, ""
// when none is.
func (p *pgPlan) scan() string {
	switch p.NodeType {
	case "Seq Scan":
		return "the table " + p.Relation + " whole"
	case "Index Scan", "Index Only Scan":
		if !hasRange(p.IndexCond) {
			return "the table " + p.Relation + noRange + " (" + p.IndexName + ")"
		}
	case "Bitmap Heap Scan":
		if !p.bitmapRange() {
			return "the table " + p.Relation + noRange
		}
	}
	for i := range p.Plans {
		if scan := p.Plans[i].scan(); scan != "" {
			return scan
		}
	}
	return ""
}

// bitmapRange reports whether a Bitmap Index Scan under p has a range.
func (p *pgPlan) bitmapRange() bool {
	for i := range p.Plans {
		c := &p.Plans[i]
		if c.NodeType == "Bitmap Index Scan" && hasRange(c.IndexCond) || c.bitmapRange() {
			return true
		}
	}
	return false
}

// mysqlOK are the access types of MySQL's and MariaDB's EXPLAIN that read
// a range or a row: ALL and index read a table or an index whole, ref
// every row of an equality (the tenant's).
var mysqlOK = map[string]bool{"RANGE": true, "INDEX_MERGE": true, "CONST": true, "EQ_REF": true, "SYSTEM": true}

// mysqlScan reads MySQL's and MariaDB's EXPLAIN by its access types (see
// mysqlOK); a derived or union result (<derived2>) is the engine's own.
func mysqlScan(res *driver.Result) (string, error) {
	tcol, kcol := -1, -1
	for i, c := range res.Columns {
		switch strings.ToLower(c) {
		case "table":
			tcol = i
		case "type":
			kcol = i
		}
	}
	if tcol < 0 || kcol < 0 {
		return "", fmt.Errorf("EXPLAIN answered no table or type column: %v", res.Columns)
	}
	for _, row := range res.Rows {
		if len(row) <= max(tcol, kcol) {
			return "", fmt.Errorf("EXPLAIN answered a row of %d values", len(row))
		}
		table, typ := planText(row[tcol]), strings.ToUpper(planText(row[kcol]))
		if table == "" || strings.HasPrefix(table, "<") || mysqlOK[typ] {
			continue
		}
		if typ == "ALL" || typ == "INDEX" {
			return "the table " + table + " whole", nil
		}
		return "the table " + table + noRange + " (access " + strings.ToLower(typ) + ")", nil
	}
	return "", nil
}
