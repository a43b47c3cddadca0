package memstore

import (
	"context"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// memLease is a lease a Store keeps.
type memLease struct {
	holder  string
	expires time.Time
}

var _ driver.Leaser = (*Store)(nil)

// AcquireLease implements Leaser.
func (s *Store) AcquireLease(ctx context.Context, name, holder string, now, expires time.Time) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.leaseMu.Lock()
	defer s.leaseMu.Unlock()
	if s.leases == nil {
		s.leases = make(map[string]memLease)
	}
	if l, ok := s.leases[name]; ok && l.holder != holder && now.Before(l.expires) {
		return false, nil
	}
	s.leases[name] = memLease{holder: holder, expires: expires}
	return true, nil
}

// ReleaseLease implements Leaser.
func (s *Store) ReleaseLease(_ context.Context, name, holder string) error {
	s.leaseMu.Lock()
	defer s.leaseMu.Unlock()
	if l, ok := s.leases[name]; ok && l.holder == holder {
		delete(s.leases, name)
	}
	return nil
}
