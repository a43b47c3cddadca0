package endpoint

import (
	"context"
	"errors"
	"fmt"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// RowWriter is where RunRows writes a run's answer as the engine reads its
// rows: its head once, then each row.
type RowWriter interface {
	// Begin is called once, before the first row, with the answer's head:
	// its Name, EndpointVersion, ExecutionID, Columns, Types and
	// ColumnKinds (the version's, as every answer's); its Results are nil
	// and HasMore is not known yet (RunRows's answer says it). An error
	// ends the run, which RunRows returns.
	Begin(head *RunResult) error
	// Row is called with each row in order, its values as a run's answer
	// holds them (cast to the column's kind). The slice and its values
	// are the Service's again once Row returns: copy what you keep. An
	// error ends the run, which RunRows returns.
	Row(row []any) error
}

// ErrWriterStopped is in the chain of RunRows's error when the RowWriter
// stopped the rows (its Begin or Row failed): the answer was cut by its
// writer (a client that went away, a bound on the written answer), not by
// the run.
var ErrWriterStopped = errors.New("endpoint: the answer's writer stopped")

// RunRows runs the endpoint as Run does, every step and rule of Run
// included (options, the endpoint's state, the version, the variables
// bound, the tenant scope, the limits, the run log and the Observer), and
// writes the answer's rows to w as the engine reads them, so that an
// answer of many rows is never held whole: memory does not grow with its
// rows.
//
// A run is streamed when the executor can hand its rows over
// (driver.RowQuerier), the endpoint is a SQL endpoint whose version's
// columns are known, the run does not ask for debug, and it does not use
// the result cache (none is configured, or the run is refresh "direct"):
// the result cache keeps answers whole, so a run that may read or store
// one is computed as Run computes it. Then w.Begin is called before the
// first row, and the answer returned has no Results (nil), with HasMore
// and the statistics of the run. Otherwise w is not called, and the
// answer returned is Run's, with its Results, for the caller to write.
//
// An error returned before w.Begin is Run's, which the caller answers as
// it would Run's. An error after it (the rows passed max_result_bytes,
// the run timed out, the engine failed, or w itself failed, then
// wrapping ErrWriterStopped) ends an answer whose head and first rows are
// written already: the caller ends it with the error, in words its reader
// sees (httpapi writes CSV's CSVErrorMarker record, NDJSON's error line
// and the X-Endpointkit-Error trailer).
func (s *Service) RunRows(ctx context.Context, project, name string, req RunRequest, w RowWriter) (*RunResult, error) {
	rec := s.beginRun(project, name, req)
	res, err := s.runRows(ctx, project, name, req, rec, w)
	return s.endRun(ctx, rec, res, err)
}

func (s *Service) runRows(ctx context.Context, project, name string, req RunRequest, rec *runRecord, w RowWriter) (*RunResult, error) {
	p, err := s.prepareRecorded(ctx, project, name, req, rec)
	if err != nil {
		return nil, err
	}
	sh, ok := s.streamShape(ctx, p)
	if !ok {
		return s.serve(ctx, p.ep, p.c, p.req, p.opts, p.now, rec)
	}
	if _, err := refreshMode(p.ep, p.opts); err != nil {
		return nil, err
	}
	values, err := s.admit(p.ep, p.c, p.req, p.opts, p.now)
	if err != nil {
		return nil, err
	}
	rs := &rowStream{w: w, sh: sh, limit: p.opts.limit, head: RunResult{
		Name: p.ep.Name, EndpointVersion: p.opts.version, ExecutionID: rec.id,
	}}
	res, err := s.computeMeasured(&streamContext{Context: ctx, rs: rs}, p.ep, p.c, p.req, values, p.opts, p.now)
	if rs.werr != nil {
		return nil, fmt.Errorf("%w: %w", ErrWriterStopped, rs.werr)
	}
	if err != nil {
		return nil, err
	}
	if !rs.begun {
		// No statement took the rows (none should fail to): the answer
		// is whole, for the caller to write.
		return s.answerOwned(ctx, p.ep, res, false, resultRows(res.Results), p.now, rec), nil
	}
	res.Results, res.HasMore = nil, rs.more
	if rs.typeErr != nil {
		res.typeErr = rs.typeErr
	}
	return s.answerOwned(ctx, p.ep, res, false, rs.rows, p.now, rec), nil
}

// streamShape is the shape of the version a run streams, false when the
// run is not streamed (see RunRows).
func (s *Service) streamShape(ctx context.Context, p prepared) (*shape, bool) {
	if _, ok := s.cfg.Executor.(driver.RowQuerier); !ok || p.c.insight != nil || p.opts.debug {
		return nil, false
	}
	mode := p.opts.refresh
	if s.results != nil && mode != RefreshDirect {
		return nil, false
	}
	// Known before the rows are read, so that the head has the
	// version's columns; versionShape keeps it with the compiled
	// version, where the run's own call finds it.
	sh := s.versionShape(ctx, p.ep, p.c, p.opts.version)
	return sh, sh != nil
}
