package httpapi_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
)

func TestKeyring(t *testing.T) {
	k := httpapi.NewKeyring()
	if err := k.Add("alpha", "1", "2"); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if err := k.Add("beta", "2"); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if err := k.Add("beta", "3"); err != nil {
		t.Fatalf("unexpected error: %v", err)
	} // adds to beta's projects
	if err := k.AddAllProjects("root"); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if err := k.Add("nobody"); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
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
			if err != nil {
				t.Errorf("%q on %q: unexpected error: %v", c.key, c.project, err)
			}
			continue
		}
		if err := err; !errors.Is(err, c.want) {
			t.Errorf("%q on %q: error %v is not %v", c.key, c.project, err, c.want)
		}
		if s, sub := err.Error(), c.key+"\""; strings.Contains(s, sub) {
			t.Errorf("the key is not echoed: %q contains %q", s, sub)
		}
	}
}

func TestKeyringRejectsUnpresentableKeys(t *testing.T) {
	k := httpapi.NewKeyring()
	for _, key := range []string{"", "a b", "tab\there", "nl\n", "\x00", "del\x7f"} {
		if err := k.Add(key, "1"); !errors.Is(err, httpapi.ErrBadKey) {
			t.Errorf("%q: error %v is not %v", key, err, httpapi.ErrBadKey)
		}
		if err := k.AddAllProjects(key); !errors.Is(err, httpapi.ErrBadKey) {
			t.Errorf("%q: error %v is not %v", key, err, httpapi.ErrBadKey)
		}
	}
	if err := k.Authorize(context.Background(), "a b", "1"); !errors.Is(err, endpoint.ErrUnauthorized) {
		t.Errorf("error %v is not %v", err, endpoint.ErrUnauthorized)
	}
}

func TestZeroKeyring(t *testing.T) {
	var k httpapi.Keyring
	if err := k.Authorize(context.Background(), "any", "1"); !errors.Is(err, endpoint.ErrUnauthorized) {
		t.Errorf("error %v is not %v", err, endpoint.ErrUnauthorized)
	}
	if err := k.Add("any", "1"); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if err := k.Authorize(context.Background(), "any", "1"); err != nil {
		t.Errorf("unexpected error: %v", err)
	}
}

// TestKeyringConcurrent adds keys while others are checked; -race judges.
func TestKeyringConcurrent(t *testing.T) {
	k := httpapi.NewKeyring()
	if err := k.Add("first", "1"); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for j := range 50 {
				if err := k.Add(fmt.Sprintf("k%d-%d", i, j), "1"); err != nil {
					t.Errorf("unexpected error: %v", err)
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range 50 {
				if err := k.Authorize(context.Background(), "first", "1"); err != nil {
					t.Errorf("unexpected error: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	for i := range 4 {
		if err := k.Authorize(context.Background(), fmt.Sprintf("k%d-49", i), "1"); err != nil {
			t.Errorf("unexpected error: %v", err)
		}
	}
}

func BenchmarkKeyringAuthorize(b *testing.B) {
	k := httpapi.NewKeyring()
	for i := range 100 {
		if err := k.Add(fmt.Sprintf("key-%03d", i), "1"); err != nil {
			b.Fatalf("unexpected error: %v", err)
		}
	}
	ctx := context.Background()
	for b.Loop() {
		if err := k.Authorize(ctx, "key-050", "1"); err != nil {
			b.Fatal(err)
		}
	}
}
