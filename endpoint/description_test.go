package endpoint_test

import (
	"context"
	"errors"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDescriptionRefusesWhatNoStoreHolds: a description with a NUL
// character, which PostgreSQL cannot store in text, or that is not UTF-8,
// was accepted and failed in the store (a 502 "storage failed" on
// PostgreSQL, stored as it was on the others). It is a 400 naming the
// description, on create and on update, and nothing is stored.
func TestDescriptionRefusesWhatNoStoreHolds(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	q := &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 1 AS x"}
	for _, bad := range []string{"a\x00b", "a\xffb"} {
		_, err := e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "described", Description: bad, Query: q})
		var ee *endpoint.Error
		if assert.True(t, errors.As(err, &ee), "Create with description %q = %v", bad, err) {
			assert.Equal(t, 400, ee.Status)
			assert.Equal(t, "description", ee.Attr)
		}
		_, err = e.svc.Get(ctx, "1", "described")
		assert.Error(t, err, "nothing is stored")
	}
	_, err := e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "described", Description: "fine", Query: q})
	require.NoError(t, err)
	bad := "x\x00"
	_, err = e.svc.Update(ctx, "1", "described", endpoint.UpdateRequest{Description: &bad})
	var ee *endpoint.Error
	if assert.True(t, errors.As(err, &ee), "Update = %v", err) {
		assert.Equal(t, 400, ee.Status)
		assert.Equal(t, "description", ee.Attr)
	}
	got, err := e.svc.Get(ctx, "1", "described")
	require.NoError(t, err)
	assert.Equal(t, "fine", got.Description)
}
