package access

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/endpointkit/endpointkit/sql/tree"
)

// Policy tells, per project, what the SQL of that project's endpoints may
// read. The endpoint service asks it when a query is saved (and when an
// editor runs one) and before every run.
//
// Implementations must be safe for concurrent use. Rules is called with the
// request's context and may look the rules up anywhere (configuration, a
// database); an error it returns is a fault of the host (a 5xx), not of the
// query. The *Rules returned must not be changed afterwards: callers may
// keep and share it.
//
// Whatever a Policy returns, the library's own tables (prefix endpointkit_)
// and the engines' catalogs stay unreadable: Check refuses them before it
// looks at the rules.
type Policy interface {
	Rules(ctx context.Context, project string) (*Rules, error)
}

// Rules is what the endpoints of one project may read. The zero value
// allows no table at all, and only the built-in functions.
type Rules struct {
	// Tables are the tables a query may name.
	Tables []Table
	// Functions are functions allowed beyond the built-in list (see the
	// package documentation), by name, compared without regard to ASCII
	// case. The file, network and administration functions of the engines
	// cannot be allowed this way.
	Functions []string
	// TableFunctions are table functions allowed in FROM beyond the
	// built-in ones (json_each, unnest, numbers, ...): a PostgreSQL or
	// ClickHouse host adds generate_series here, which is not built in
	// because the SQLite build lacks it.
	TableFunctions []string
	// AnyTable lets a query name any table that Tables does not list, as it
	// is and unscoped, except the library's own tables and the engines'
	// catalogs, which stay unreadable, and a name that may be a table of
	// Tables with a TenantColumn or Columns under another schema or
	// database (main.events, public.events or db.events for events,
	// sessions for analytics.sessions), which is refused. It suits a host whose executor's
	// database user can read only the analytics tables; the endpoint
	// Service uses it when it is given no Policy.
	AnyTable bool
}

// Table is one table a query may read.
//
// Name is a table name, or a schema-qualified one ("analytics.events"),
// each part a plain identifier ([A-Za-z_][A-Za-z0-9_]*). A query names it
// with the same parts, in any ASCII case, quoted or not: "events" matches
// events, EVENTS and "Events", but not main.events or public.events, which
// are other names as far as the rules go (list them to allow them). Confine
// writes every table it lets through with the spelling given here.
//
// Columns, when not nil, are the only columns a query can see: Confine
// replaces every reference to the table by a derived table that selects
// just these, so the engine itself refuses any other column. Check alone
// does not enforce them.
//
// TenantColumn, when set, is the column that holds the project (tenant) a
// row belongs to: Confine replaces every reference to the table by a derived
// table filtered on TenantColumn = the tenant placeholder, so the query sees
// only the rows of the project it runs for. It need not be among Columns.
type Table struct {
	Name         string
	Columns      []string
	TenantColumn string
}

// Static is a Policy that gives every project the same rules, except the
// projects given rules of their own.
type Static struct {
	all      *Rules
	projects map[string]*Rules
}

// NewStatic returns a Static policy: projects[p] for project p when present,
// all otherwise. It checks every Rules as Check would, so that a mistake in
// the host's configuration (a malformed name, a protected table, a table
// listed twice) is reported at start-up instead of at the first query.
func NewStatic(all Rules, projects map[string]Rules) (*Static, error) {
	s := &Static{projects: make(map[string]*Rules, len(projects))}
	a := cloneRules(all)
	if _, err := compileRules(a); err != nil {
		return nil, err
	}
	s.all = a
	for _, p := range sortedKeys(projects) {
		r := cloneRules(projects[p])
		if _, err := compileRules(r); err != nil {
			return nil, fmt.Errorf("%w (rules of project %q)", err, p)
		}
		s.projects[p] = r
	}
	return s, nil
}

// Rules returns the rules of project. It never fails.
func (s *Static) Rules(_ context.Context, project string) (*Rules, error) {
	if r, ok := s.projects[project]; ok {
		return r, nil
	}
	return s.all, nil
}

// sortedKeys returns the keys of m in order, so that of several bad
// projects the same one is reported every time.
func sortedKeys(m map[string]Rules) []string { return slices.Sorted(maps.Keys(m)) }

// cloneRules copies r deeply, so that a Static does not change when the
// caller's slices do.
func cloneRules(r Rules) *Rules {
	c := &Rules{
		Functions:      append([]string(nil), r.Functions...),
		TableFunctions: append([]string(nil), r.TableFunctions...),
		Tables:         make([]Table, len(r.Tables)),
		AnyTable:       r.AnyTable,
	}
	for i, t := range r.Tables {
		c.Tables[i] = Table{Name: t.Name, TenantColumn: t.TenantColumn}
		if t.Columns != nil {
			c.Tables[i].Columns = append([]string{}, t.Columns...)
		}
	}
	return c
}

// errPolicy marks a fault of the rules themselves.
var errPolicy = errors.New("access: invalid rules")

func policyErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errPolicy}, args...)...)
}

// tableRule is one Table, checked, with its name split.
type tableRule struct {
	parts   []string // as the rules spell them
	columns []string
	tenant  string
}

// ruleset is a Rules checked and indexed for lookups.
type ruleset struct {
	// tables maps the lower-cased dotted name to its rule.
	tables map[string]*tableRule
	// shadowable holds the lower-cased names a CTE or a WITH alias may not
	// take: unqualified table names and tenant columns.
	shadowable map[string]bool
	functions  map[string]bool
	tableFuncs map[string]bool
	anyTable   bool
	// scopedLast maps the lower-cased last part of each table with a
	// tenant column or a column list to its name: under anyTable, another
	// name with that last part may be the same table, unscoped.
	scopedLast map[string]string
	scoped     bool // some table has a tenant column or a column list
	tenantUsed bool // some table has a tenant column
	// treeTables are the tables as sql/tree's printer scopes them.
	treeTables []tree.Table
}

// compileRules checks r and indexes it.
func compileRules(r *Rules) (*ruleset, error) {
	if r == nil {
		r = &Rules{}
	}
	rs := &ruleset{
		tables:     make(map[string]*tableRule, len(r.Tables)),
		shadowable: make(map[string]bool),
		functions:  make(map[string]bool, len(r.Functions)),
		tableFuncs: make(map[string]bool, len(r.TableFunctions)),
		anyTable:   r.AnyTable,
		scopedLast: make(map[string]string),
	}
	for i := range r.Tables {
		if err := rs.addTable(&r.Tables[i]); err != nil {
			return nil, err
		}
	}
	for _, f := range r.Functions {
		if !isPlainName(f) {
			return nil, policyErrorf("function %q must match [A-Za-z_][A-Za-z0-9_]*", f)
		}
		if neverFunction(strings.ToLower(f)) {
			return nil, policyErrorf("function %q reads files, the network or the server's state and cannot be allowed", f)
		}
		rs.functions[strings.ToLower(f)] = true
	}
	for _, f := range r.TableFunctions {
		if !isPlainName(f) {
			return nil, policyErrorf("table function %q must match [A-Za-z_][A-Za-z0-9_]*", f)
		}
		lf := strings.ToLower(f)
		if neverFunction(lf) || neverTableFunction(lf) {
			return nil, policyErrorf("table function %q reads files, the network, catalogs or other tables and cannot be allowed", f)
		}
		rs.tableFuncs[lf] = true
	}
	return rs, nil
}

// addTable checks t and adds it to rs.
func (rs *ruleset) addTable(t *Table) error {
	parts, err := tableParts(t.Name)
	if err != nil {
		return err
	}
	key := strings.ToLower(t.Name)
	if _, dup := rs.tables[key]; dup {
		return policyErrorf("table %q is listed twice (names are compared without regard to case)", t.Name)
	}
	tr := &tableRule{parts: parts, tenant: t.TenantColumn}
	if t.Columns != nil {
		if err := checkColumns(t); err != nil {
			return err
		}
		tr.columns = t.Columns
		rs.scoped = true
	}
	if t.TenantColumn != "" {
		if !isPlainName(t.TenantColumn) {
			return policyErrorf("table %q: tenant column %q must match [A-Za-z_][A-Za-z0-9_]*", t.Name, t.TenantColumn)
		}
		rs.shadowable[strings.ToLower(t.TenantColumn)] = true
		rs.scoped, rs.tenantUsed = true, true
	}
	rs.tables[key] = tr
	if tr.tenant != "" || tr.columns != nil {
		rs.scopedLast[strings.ToLower(parts[len(parts)-1])] = t.Name
	}
	rs.treeTables = append(rs.treeTables, tree.Table{Parts: parts, TenantColumn: tr.tenant, Columns: tr.columns})
	if len(parts) == 1 {
		rs.shadowable[key] = true
	}
	return nil
}

// tableParts splits a table's name into its parts and checks them.
func tableParts(name string) ([]string, error) {
	parts := strings.Split(name, ".")
	if len(parts) > 3 {
		return nil, policyErrorf("table %q has more than three parts", name)
	}
	for _, p := range parts {
		if !isPlainName(p) {
			return nil, policyErrorf("table %q: each part of a name must match [A-Za-z_][A-Za-z0-9_]*", name)
		}
	}
	if reason, _ := protectedTable(parts); reason != "" {
		return nil, policyErrorf("table %q can never be read (%s)", name, reason)
	}
	return parts, nil
}

// checkColumns checks the column list of t, which is not nil.
func checkColumns(t *Table) error {
	if len(t.Columns) == 0 {
		return policyErrorf("table %q: Columns is empty; leave it nil to allow every column", t.Name)
	}
	seen := make(map[string]bool, len(t.Columns))
	for _, c := range t.Columns {
		if !isPlainName(c) {
			return policyErrorf("table %q: column %q must match [A-Za-z_][A-Za-z0-9_]*", t.Name, c)
		}
		if seen[strings.ToLower(c)] {
			return policyErrorf("table %q: column %q is listed twice", t.Name, c)
		}
		seen[strings.ToLower(c)] = true
	}
	return nil
}

// isPlainName reports whether s is an identifier every engine reads the
// same way unquoted: [A-Za-z_][A-Za-z0-9_]*.
func isPlainName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c|0x20 >= 'a' && c|0x20 <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
