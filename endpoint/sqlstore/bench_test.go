package sqlstore

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkEndpointGet measures the read that every run of an endpoint
// makes, on SQLite in memory and in a WAL file.
func BenchmarkEndpointGet(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			s := be.open(b)
			ctx := context.Background()
			for i := 0; i < 100; i++ {
				e, v := endpointFixture("p", fmt.Sprintf("endpoint_%03d", i))
				if err := s.Endpoints().Create(ctx, e, v); err != nil {
					b.Fatal(err)
				}
			}
			st := s.Endpoints()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := st.Get(ctx, "p", "endpoint_042"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEndpointMarkExecuted measures the write that a run records.
func BenchmarkEndpointMarkExecuted(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			s := be.open(b)
			ctx := context.Background()
			e, v := endpointFixture("p", "a")
			if err := s.Endpoints().Create(ctx, e, v); err != nil {
				b.Fatal(err)
			}
			st := s.Endpoints()
			at := t0
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				at = at.Add(1)
				if err := st.MarkExecuted(ctx, "p", e.ID, at); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkVariableGetMany measures the read of an endpoint's variables
// (three) when its query is compiled.
func BenchmarkVariableGetMany(b *testing.B) {
	s := openMemory(b)
	ctx := context.Background()
	var ids []string
	for i := 0; i < 50; i++ {
		v := variableFixture(fmt.Sprintf("v%d", i))
		if err := s.Variables().Create(ctx, "p", v); err != nil {
			b.Fatal(err)
		}
		if i%10 == 0 && len(ids) < 3 {
			ids = append(ids, v.ID)
		}
	}
	st := s.Variables()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		got, err := st.GetMany(ctx, "p", ids)
		if err != nil || len(got) != 3 {
			b.Fatal(got, err)
		}
	}
}
