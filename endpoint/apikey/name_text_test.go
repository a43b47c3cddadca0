package apikey_test

import (
	"context"
	"errors"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKeyNameRefusesWhatNoStoreHolds: a key name with a NUL character,
// which PostgreSQL cannot store in text, or that is not UTF-8, was
// accepted and failed in the store (a 502 on PostgreSQL). It is a 400
// naming the name, and no key is made.
func TestKeyNameRefusesWhatNoStoreHolds(t *testing.T) {
	ctx := context.Background()
	k, err := apikey.New(apikey.Config{Store: memstore.NewKeyStore()})
	require.NoError(t, err)
	for _, name := range []string{"a\x00b", "a\xffb"} {
		_, _, err := k.Create(ctx, "1", apikey.CreateRequest{Name: name, Scopes: []string{apikey.ScopeEndpointRead}})
		var e *endpoint.Error
		if assert.True(t, errors.As(err, &e), "Create(name %q) = %v", name, err) {
			assert.Equal(t, 400, e.Status)
			assert.Equal(t, "name", e.Attr)
		}
	}
	keys, err := k.List(ctx, "1")
	require.NoError(t, err)
	assert.Empty(t, keys)
}
