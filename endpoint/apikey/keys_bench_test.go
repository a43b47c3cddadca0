package apikey_test

import (
	"context"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
)

// BenchmarkKeysAuthenticate is a request's cost of a stored key: the
// SHA-256 of the secret and a cached read (the store is read once per
// CacheTTL).
func BenchmarkKeysAuthenticate(b *testing.B) {
	ctx := context.Background()
	k, err := apikey.New(apikey.Config{Store: memstore.NewKeyStore()})
	if err != nil {
		b.Fatal(err)
	}
	_, secret, err := k.Create(ctx, "1", apikey.CreateRequest{Name: "b", Scopes: []string{apikey.ScopeEndpointRead}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := k.Authenticate(ctx, secret); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKeysAdmit is a run's cost of its key's budget.
func BenchmarkKeysAdmit(b *testing.B) {
	ctx := context.Background()
	k, err := apikey.New(apikey.Config{Store: memstore.NewKeyStore(), RunsPerMinute: -1, RunsPerHour: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	key, _, err := k.Create(ctx, "1", apikey.CreateRequest{Name: "b", Scopes: []string{apikey.ScopeEndpointRead}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := k.Admit(key, false); err != nil {
			b.Fatal(err)
		}
	}
}
