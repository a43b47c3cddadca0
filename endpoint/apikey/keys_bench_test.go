package apikey_test

import (
	"context"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/stretchr/testify/require"
)

// BenchmarkKeysAuthenticate is a request's cost of a stored key: the
// SHA-256 of the secret and a cached read (the store is read once per
// CacheTTL).
func BenchmarkKeysAuthenticate(b *testing.B) {
	ctx := context.Background()
	k, err := apikey.New(apikey.Config{Store: memstore.NewKeyStore()})
	require.NoError(b, err)
	_, secret, err := k.Create(ctx, "1", apikey.CreateRequest{Name: "b", Scopes: []string{apikey.ScopeEndpointRead}})
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		_, err := k.Authenticate(ctx, secret)
		require.NoError(b, err)
	}
}

// BenchmarkKeysAdmit is a run's cost of its key's budget.
func BenchmarkKeysAdmit(b *testing.B) {
	ctx := context.Background()
	k, err := apikey.New(apikey.Config{Store: memstore.NewKeyStore(), RunsPerMinute: -1, RunsPerHour: 1 << 40})
	require.NoError(b, err)
	key, _, err := k.Create(ctx, "1", apikey.CreateRequest{Name: "b", Scopes: []string{apikey.ScopeEndpointRead}})
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		require.NoError(b, k.Admit(key, false))
	}
}
