//go:build chdb

package chdb

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// runBenchEvents is how many demo events BenchmarkChDBRun reads.
const runBenchEvents = 200_000

// runBenchQueries are BenchmarkChDBRun's endpoints: one row by its uuid,
// ten groups (the countries), ten thousand groups (the users); decode is
// how a caller who wrote the query by hand reads its answer, into a slice
// of the capacity given.
var runBenchQueries = []struct {
	name, sql string
	decode    func(out string, capacity int) (int, error)
}{
	{"point", "SELECT uuid, event, timestamp FROM events WHERE uuid = {variables.id}", decodeEvents},
	{"group10", "SELECT JSONExtractString(properties, 'country') AS country, count() AS n FROM events GROUP BY country ORDER BY country", decodeCounts},
	{"group10k", "SELECT distinct_id, count() AS n, max(timestamp) AS last FROM events GROUP BY distinct_id ORDER BY distinct_id", decodeUsers},
}

// The rows of runBenchQueries as a caller who wrote each query by hand
// decodes them: one struct a row, the text cut from the answer, in a slice
// sized for the rows the query answers.
type (
	eventRow struct{ UUID, Event, Timestamp string }
	countRow struct {
		Country string
		N       uint64
	}
	userRow struct {
		DistinctID string
		N          uint64
		Last       string
	}
)

// handReader reads a RowBinaryWithNamesAndTypes answer as a caller of one
// known query does: the header checked against the types it expects, then
// each value by its column's type.
type handReader struct {
	out string
	off int
	err error
}

func (r *handReader) uvarint() uint64 {
	v, n := binary.Uvarint([]byte(r.out[r.off:min(len(r.out), r.off+binary.MaxVarintLen64)]))
	if n <= 0 {
		r.err, r.off = errShort, len(r.out)
		return 0
	}
	r.off += n
	return v
}

func (r *handReader) string() string {
	n := r.uvarint()
	if n > uint64(len(r.out)-r.off) {
		r.err, r.off = errShort, len(r.out)
		return ""
	}
	s := r.out[r.off : r.off+int(n)]
	r.off += int(n)
	return s
}

func (r *handReader) uint64() uint64 {
	if len(r.out)-r.off < 8 {
		r.err, r.off = errShort, len(r.out)
		return 0
	}
	v := binary.LittleEndian.Uint64([]byte(r.out[r.off : r.off+8]))
	r.off += 8
	return v
}

// header reads the columns' names and checks their types.
func (r *handReader) header(types ...string) {
	n := int(r.uvarint())
	for range n {
		r.string()
	}
	for i := range n {
		if typ := r.string(); r.err == nil && (n != len(types) || typ != types[i]) {
			r.err = fmt.Errorf("column %d is %s, want one of %v", i, typ, types)
		}
	}
}

func (r *handReader) more() bool { return r.err == nil && r.off < len(r.out) }

func decodeEvents(out string, capacity int) (int, error) {
	r := &handReader{out: out}
	r.header("String", "String", "String")
	rows := make([]eventRow, 0, capacity)
	for r.more() {
		rows = append(rows, eventRow{r.string(), r.string(), r.string()})
	}
	return len(rows), r.err
}

func decodeCounts(out string, capacity int) (int, error) {
	r := &handReader{out: out}
	r.header("String", "UInt64")
	rows := make([]countRow, 0, capacity)
	for r.more() {
		rows = append(rows, countRow{r.string(), r.uint64()})
	}
	return len(rows), r.err
}

func decodeUsers(out string, capacity int) (int, error) {
	r := &handReader{out: out}
	r.header("String", "UInt64", "String")
	rows := make([]userRow, 0, capacity)
	for r.more() {
		rows = append(rows, userRow{r.string(), r.uint64(), r.string()})
	}
	return len(rows), r.err
}

// BenchmarkChDBRun runs each endpoint of runBenchQueries on 200,000 demo
// events of project 1 in chDB: library, through Service.Run (scoped to the
// project, no result cache, no run log); direct, the same statement (the
// scoped SQL the Service ran, recorded, with its parameters) sent
// straight to chDB through its C API, answering the same format, the
// bytes copied to Go and decoded as a caller who wrote the query by hand
// would (one struct a row, the text cut from the answer, the slice of rows
// allocated once: the leanest reading of it into Go values). .../interleaved runs both in turn and
// reports the ratio of their medians (library/direct), the library's
// cost, which should stay within 1.05, and the ratio to the statement
// sent directly whose answer is not decoded at all (library/undecoded):
//
//	go test -tags chdb -run '^$' -bench BenchmarkChDBRun -benchtime 40x ./endpoint/chdb/
func BenchmarkChDBRun(b *testing.B) {
	x := executor(b)
	ctx := context.Background()
	for _, q := range []string{"CREATE DATABASE IF NOT EXISTS chdbrun", "USE chdbrun"} {
		require.NoError(b, x.Load(ctx, q, nil))
	}
	b.Cleanup(func() { x.Load(context.Background(), "USE default", nil) }) //nolint:errcheck // the next Load says
	res, err := x.Read(ctx, "SELECT count() AS n FROM system.tables WHERE database = 'chdbrun' AND name = 'events'", nil)
	require.NoError(b, err)
	if res.Rows[0][0] != int64(1) {
		for _, s := range demo.SchemaFor(engine.ClickHouse) {
			require.NoError(b, x.Load(ctx, s, nil))
		}
		// Another project's rows, which the scope leaves out.
		require.NoError(b, loadEvents(ctx, x, b.TempDir(), runBenchEvents, runBenchEvents/10))
	}
	policy, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}, nil)
	require.NoError(b, err)
	rec := heldexec.NewFake(x) // keeps the statements the Service ran
	svc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: x, Access: policy})
	require.NoError(b, err)
	recSvc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: rec, Access: policy})
	require.NoError(b, err)
	const idVar = "5d1c2a34-0000-4000-8000-00000000000a"
	for _, s := range []*endpoint.Service{svc, recSvc} {
		_, err := s.CreateVariable(ctx, "1", variable.Variable{ID: idVar, Name: "id", Type: variable.String})
		require.NoError(b, err)
	}
	limit := 20_000
	for _, q := range runBenchQueries {
		var refs map[string]endpoint.VariableRef
		req := endpoint.RunRequest{Limit: &limit}
		if strings.Contains(q.sql, "{variables.id}") {
			refs = map[string]endpoint.VariableRef{idVar: {VariableID: idVar, CodeName: "id"}}
			req.Variables = map[string]any{"id": "00000000-0000-4000-8000-000000001234"}
		}
		for _, s := range []*endpoint.Service{svc, recSvc} {
			_, err := s.Create(ctx, "1", endpoint.CreateRequest{Name: q.name, Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: q.sql, Variables: refs}})
			require.NoError(b, err)
		}
		got, err := recSvc.Run(ctx, "1", q.name, req)
		require.NoError(b, err)
		st := rec.Last()
		// Only the count is kept (the closures below hold it): the answer
		// itself, held for the whole benchmark, would be scanned by every
		// collection of both sides.
		answer, _ := got.Results.([][]any)
		rows := len(answer)
		// direct sends the statement and decodes its answer by hand.
		direct := func() (int, error) {
			out, _, err := x.run(ctx, st.SQL, resultFormat, st.Args)
			if err != nil {
				return 0, err
			}
			return q.decode(out, rows)
		}
		n, err := direct()
		require.NoError(b, err)
		require.GreaterOrEqual(b, n, rows, "%s: the library answered rows, the statement sent directly %d", q.name, n)
		require.NotEqual(b, 0, rows, "%s: the library answered rows, the statement sent directly %d", q.name, n)
		b.Run(q.name+"/library", func(b *testing.B) {
			for b.Loop() {
				_, err := svc.Run(ctx, "1", q.name, req)
				require.NoError(b, err)
			}
			b.ReportMetric(float64(rows), "rows")
		})
		b.Run(q.name+"/direct", func(b *testing.B) {
			for b.Loop() {
				_, err := direct()
				require.NoError(b, err)
			}
			b.ReportMetric(float64(n), "rows")
		})
		// Both in turn, each iteration one run of each: the ratio of their
		// medians holds on a machine whose load changes between the two
		// sub-benchmarks above.
		b.Run(q.name+"/interleaved", func(b *testing.B) {
			var lib, dir, raw []time.Duration
			for i := 0; b.Loop(); i++ {
				// The three in turn, each first in one iteration of three.
				for k := range 3 {
					start := time.Now()
					switch (i + k) % 3 {
					case 0:
						_, err := svc.Run(ctx, "1", q.name, req)
						require.NoError(b, err)
						lib = append(lib, time.Since(start))
					case 1:
						_, err := direct()
						require.NoError(b, err)
						dir = append(dir, time.Since(start))
					case 2:
						_, _, err := x.run(ctx, st.SQL, resultFormat, st.Args)
						require.NoError(b, err)
						raw = append(raw, time.Since(start))
					}
				}
			}
			l, d, u := median(lib), median(dir), median(raw)
			b.ReportMetric(float64(l.Microseconds()), "library-us")
			b.ReportMetric(float64(d.Microseconds()), "direct-us")
			b.ReportMetric(float64(l)/float64(d), "library/direct")
			b.ReportMetric(float64(l)/float64(u), "library/undecoded")
		})
	}
}

// loadEvents loads n demo events of project 1 and other of project 2 into
// the session's events table through a TabSeparated file, which chDB
// reads in one INSERT (bound INSERTs of 150 rows each would take minutes).
func loadEvents(ctx context.Context, x *Executor, dir string, n, other int) error {
	path := filepath.Join(dir, "events.tsv")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	esc := strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`)
	for _, p := range []struct {
		project string
		n       int
		seed    uint64
	}{{"1", n, endpointtest.DemoSeed}, {"2", other, endpointtest.DemoSeed + 1}} {
		err := demo.Generate(p.n, p.seed, func(ev demo.Event) error {
			props, err := json.Marshal(ev.Properties)
			if err != nil {
				return err
			}
			for i, v := range []string{p.project, ev.UUID, ev.Event, ev.DistinctID, ev.Timestamp.Format(demo.TimeLayout), string(props)} {
				if i > 0 {
					w.WriteByte('\t')
				}
				w.WriteString(esc.Replace(v))
			}
			return w.WriteByte('\n')
		})
		if err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return x.Load(ctx, "INSERT INTO events SELECT * FROM file("+string(engine.ClickHouse.AppendString(nil, path))+
		", 'TabSeparated', 'project_id String, uuid String, event String, distinct_id String, timestamp String, properties String')", nil)
}

// median is the middle of times (which it sorts).
func median(times []time.Duration) time.Duration {
	slices.Sort(times)
	return times[len(times)/2]
}
