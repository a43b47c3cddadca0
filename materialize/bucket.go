package materialize

import (
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// DefaultBucket is the bucket of a Date range variable without an
// override. Coarser buckets make smaller tables; a run whose date is not on
// a boundary of its bucket runs inline.
const DefaultBucket = engine.Day

// boundary reports whether t is the first instant of a bucket of b.
func boundary(b engine.Bucket, t time.Time) bool { return b.Floor(t).Equal(t) }

// bucketExpr returns the SQL that truncates col (printed) to the start of its
// bucket, as a value that compares with a bound date-time the way the
// column does. The timestamp is read strictly (see engine.StrictTimestamp):
// a value an engine would compare as text but bucket otherwise fails the
// refresh instead of answering differently from the inline query.
func bucketExpr(b engine.Bucket, e engine.Engine, col string) string {
	return e.Truncate(b, e.StrictTimestamp(col))
}
