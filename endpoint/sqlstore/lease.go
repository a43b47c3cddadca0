package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

var _ driver.Leaser = (*endpoints)(nil)

// AcquireLease implements driver.Leaser with one row per lease: an
// UPDATE takes a row that is free (expired, or already the holder's), and
// an INSERT creates a missing one, its primary key letting one of several
// concurrent inserts win. Each statement is atomic on its own, so no
// transaction is needed; the caller's clock decides expiry.
func (s *endpoints) AcquireLease(ctx context.Context, name, holder string, now, expires time.Time) (bool, error) {
	st := (*Store)(s)
	d := st.dialect
	res, err := st.exec(ctx, rebind(d, `UPDATE `+leasesTable+` SET holder = ?, expires_ns = ? WHERE name = ? AND (holder = ? OR expires_ns <= ?)`),
		holder, expires.UnixNano(), name, holder, now.UnixNano())
	if err != nil {
		return false, fmt.Errorf("sqlstore: lease %s: %w", name, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 1 {
		return true, nil
	}
	_, err = st.exec(ctx, rebind(d, `INSERT INTO `+leasesTable+` (name, holder, expires_ns) VALUES (?, ?, ?)`), name, holder, expires.UnixNano())
	if err == nil {
		return true, nil
	}
	if !isUniqueViolation(err) {
		return false, fmt.Errorf("sqlstore: lease %s: %w", name, err)
	}
	// The row exists. MySQL counts only changed rows, so a renewal to the
	// expiry already stored updates "nothing": the holder decides.
	var cur string
	err = st.queryRow(ctx, rebind(d, `SELECT holder FROM `+leasesTable+` WHERE name = ? AND expires_ns = ?`), name, expires.UnixNano()).Scan(&cur)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("sqlstore: lease %s: %w", name, err)
	}
	return cur == holder, nil
}

// ReleaseLease implements driver.Leaser.
func (s *endpoints) ReleaseLease(ctx context.Context, name, holder string) error {
	st := (*Store)(s)
	if _, err := st.exec(ctx, rebind(st.dialect, `DELETE FROM `+leasesTable+` WHERE name = ? AND holder = ?`), name, holder); err != nil {
		return fmt.Errorf("sqlstore: release lease %s: %w", name, err)
	}
	return nil
}
