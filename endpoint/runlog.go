package endpoint

import (
	"context"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// Logs returns a page of the run log of the endpoint named name, newest
// first, and the cursor of the next page ("" when there is none). limit is
// at most 1000; 0 means 100. A cursor that no page gave is a 400.
func (s *Service) Logs(ctx context.Context, project, name string, limit int, before string) ([]RunLogEntry, string, error) {
	if limit < 0 || limit > 1000 {
		return nil, "", invalidf(CodeInvalidInput, "limit", "limit must be between 1 and 1000, got %d.", limit)
	}
	if limit == 0 {
		limit = 100
	}
	if before != "" {
		if _, _, err := driver.ParseCursor(before); err != nil {
			return nil, "", invalidf(CodeInvalidInput, "before", "Invalid cursor '%s': pass the 'next' of a previous page.", cut(before))
		}
	}
	e, err := s.get(ctx, project, name)
	if err != nil {
		return nil, "", err
	}
	// What the runs so far queued is in the log before it is read.
	if err := s.Flush(ctx); err != nil {
		return nil, "", err
	}
	list, next, err := s.runLog.List(ctx, project, e.ID, driver.LogPage{Limit: limit, Before: before})
	if err != nil {
		return nil, "", storeError(err, nil)
	}
	out := make([]RunLogEntry, len(list))
	for i, e := range list {
		out[i] = ownCounts(runLogEntryOf(e))
	}
	return out, next, nil
}

// ownCounts returns e with counts of its own: a run log (the memory one)
// may hand out pointers to the counts it keeps, which a caller writing to
// its page would change for every later reader.
func ownCounts(e RunLogEntry) RunLogEntry {
	c := &struct {
		rows                int
		rowsRead, bytesRead int64
	}{}
	e.Rows, e.RowsRead, e.BytesRead = ownValue(&c.rows, e.Rows), ownValue(&c.rowsRead, e.RowsRead), ownValue(&c.bytesRead, e.BytesRead)
	return e
}
