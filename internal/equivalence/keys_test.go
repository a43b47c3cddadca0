package equivalence

import (
	"context"
	"fmt"
	"sync"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
)

// A run authenticated by a stored API key (apikey.Keys), as the HTTP API
// makes it: the secret is authenticated, the key must be of project 1 and
// may use the endpoint, its budget admits the run, and the run carries the
// key's id. One Keys serves every Service of the matrices; its budgets
// are off so that the matrices' thousands of runs are not throttled.
var runKeys struct {
	once   sync.Once
	keys   *apikey.Keys
	p1, p2 string // secrets: a key of project 1, one of project 2
	err    error
}

func keysForRuns() (*apikey.Keys, string, string, error) {
	runKeys.once.Do(func() {
		k, err := apikey.New(apikey.Config{Store: memstore.NewKeyStore(),
			RunsPerMinute: -1, RunsPerHour: -1, MaterializedRunsPerMinute: -1, MaterializedRunsPerHour: -1})
		if err != nil {
			runKeys.err = err
			return
		}
		req := apikey.CreateRequest{Name: "matrix", Scopes: []string{apikey.ScopeEndpointRead}}
		_, p1, err := k.Create(context.Background(), "1", req)
		if err == nil {
			_, runKeys.p2, err = k.Create(context.Background(), "2", req)
		}
		runKeys.keys, runKeys.p1, runKeys.err = k, p1, err
	})
	return runKeys.keys, runKeys.p1, runKeys.p2, runKeys.err
}

// keyedRequest returns req as a stored key of project 1 sends it to the
// endpoint name, or the reason the key may not: the checks of the HTTP
// API, with project 2's key refused for project 1.
func keyedRequest(ctx context.Context, name string, req endpoint.RunRequest) (endpoint.RunRequest, error) {
	keys, p1, p2, err := keysForRuns()
	if err != nil {
		return req, err
	}
	if other, err := keys.Authenticate(ctx, p2); err != nil || other.ProjectID == "1" {
		return req, fmt.Errorf("project 2's key authenticates as %q (%v): it must be refused for project 1", other.ProjectID, err)
	}
	key, err := keys.Authenticate(ctx, p1)
	if err != nil {
		return req, err
	}
	if key.ProjectID != "1" || !key.Allows(apikey.ScopeEndpointRead) || !key.AllowsEndpoint(name) {
		return req, fmt.Errorf("project 1's key may not run %s: %+v", name, key)
	}
	if err := keys.Admit(key, false); err != nil {
		return req, err
	}
	req.KeyID = key.ID
	return req, nil
}

// storedKey is the way of a run authenticated by a stored key.
var storedKey = way{"stored key", func(ctx context.Context, svc *endpoint.Service, _ *dialect, s *spec, name string, r run) answer {
	req, err := keyedRequest(ctx, name, endpoint.RunRequest{})
	if err != nil {
		return answer{err: "stored key: " + err.Error()}
	}
	_, a := runReq(ctx, svc, s, name, r, req)
	return a
}}
