package httpapi_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKeyring(t *testing.T) {
	k := httpapi.NewKeyring()
	require.NoError(t, k.Add("alpha", "1", "2"))
	require.NoError(t, k.Add("beta", "2"))
	require.NoError(t, k.Add("beta", "3")) // adds to beta's projects
	require.NoError(t, k.AddAllProjects("root"))
	require.NoError(t, k.Add("nobody"))
	k.AddHash(sha256.Sum256([]byte("hashed")), "9")

	cases := []struct {
		key, project string
		want         error // nil, ErrUnauthorized or ErrForbidden
	}{
		{"alpha", "1", nil},
		{"alpha", "2", nil},
		{"alpha", "3", endpoint.ErrForbidden},
		{"beta", "2", nil},
		{"beta", "3", nil},
		{"beta", "1", endpoint.ErrForbidden},
		{"root", "1", nil},
		{"root", "anything", nil},
		{"nobody", "1", endpoint.ErrForbidden},
		{"hashed", "9", nil},
		{"hashed", "1", endpoint.ErrForbidden},
		{"ALPHA", "1", endpoint.ErrUnauthorized},
		{"alph", "1", endpoint.ErrUnauthorized},
		{"alpha ", "1", endpoint.ErrUnauthorized},
		{"", "1", endpoint.ErrUnauthorized},
		{"1", "1", endpoint.ErrUnauthorized}, // a project is not a key
	}
	for _, c := range cases {
		err := k.Authorize(context.Background(), c.key, c.project)
		if c.want == nil {
			assert.NoError(t, err, "%q on %q", c.key, c.project)
			continue
		}
		assert.ErrorIs(t, err, c.want, "%q on %q", c.key, c.project)
		s, sub := err.Error(), c.key+"\""
		assert.NotContains(t, s, sub, "the key is not echoed")
	}
}

func TestKeyringRejectsUnpresentableKeys(t *testing.T) {
	k := httpapi.NewKeyring()
	for _, key := range []string{"", "a b", "tab\there", "nl\n", "\x00", "del\x7f"} {
		assert.ErrorIs(t, k.Add(key, "1"), httpapi.ErrBadKey, "%q", key)
		assert.ErrorIs(t, k.AddAllProjects(key), httpapi.ErrBadKey, "%q", key)
	}
	assert.ErrorIs(t, k.Authorize(context.Background(), "a b", "1"), endpoint.ErrUnauthorized)
}

func TestZeroKeyring(t *testing.T) {
	var k httpapi.Keyring
	assert.ErrorIs(t, k.Authorize(context.Background(), "any", "1"), endpoint.ErrUnauthorized)
	require.NoError(t, k.Add("any", "1"))
	assert.NoError(t, k.Authorize(context.Background(), "any", "1"))
}

// TestKeyringConcurrent adds keys while others are checked; -race judges.
func TestKeyringConcurrent(t *testing.T) {
	k := httpapi.NewKeyring()
	require.NoError(t, k.Add("first", "1"))
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for j := range 50 {
				assert.NoError(t, k.Add(fmt.Sprintf("k%d-%d", i, j), "1"))
			}
		}()
		go func() {
			defer wg.Done()
			for range 50 {
				assert.NoError(t, k.Authorize(context.Background(), "first", "1"))
			}
		}()
	}
	wg.Wait()
	for i := range 4 {
		assert.NoError(t, k.Authorize(context.Background(), fmt.Sprintf("k%d-49", i), "1"))
	}
}

func BenchmarkKeyringAuthorize(b *testing.B) {
	k := httpapi.NewKeyring()
	for i := range 100 {
		require.NoError(b, k.Add(fmt.Sprintf("key-%03d", i), "1"))
	}
	ctx := context.Background()
	for b.Loop() {
		require.NoError(b, k.Authorize(ctx, "key-050", "1"))
	}
}
