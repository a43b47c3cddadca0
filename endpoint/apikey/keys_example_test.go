package apikey_test

import (
	"context"
	"fmt"

	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
)

// ExampleKeys creates an API key for a machine that may run one endpoint,
// authenticates it, and revokes it. The secret is shown once; the store
// keeps its SHA-256.
func ExampleKeys() {
	ctx := context.Background()
	keys, err := apikey.New(apikey.Config{Store: memstore.NewKeyStore()})
	if err != nil {
		panic(err)
	}
	key, secret, err := keys.Create(ctx, "1", apikey.CreateRequest{
		Name:      "dashboard",
		Scopes:    []string{apikey.ScopeEndpointRead},
		Endpoints: []string{"daily_revenue"},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(apikey.LooksLikeKey(secret), key.Prefix == secret[:12])

	k, err := keys.Authenticate(ctx, secret)
	if err != nil {
		panic(err)
	}
	fmt.Println(k.ProjectID, k.Allows(apikey.ScopeEndpointRead), k.Allows(apikey.ScopeEndpointWrite))
	fmt.Println(k.AllowsEndpoint("daily_revenue"), k.AllowsEndpoint("users"))
	fmt.Println(k.RunsPerMinute, k.MaterializedRunsPerMinute)

	if err := keys.Revoke(ctx, "1", key.ID); err != nil {
		panic(err)
	}
	_, err = keys.Authenticate(ctx, secret)
	fmt.Println(err)
	// Output:
	// true true
	// 1 true false
	// true false
	// 240 1200
	// This API key was revoked.
}
