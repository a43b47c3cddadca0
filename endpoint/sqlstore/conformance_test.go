package sqlstore

import (
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	epstoretest "github.com/endpointkit/endpointkit/endpoint/storetest"
	"github.com/endpointkit/endpointkit/variable"
	varstoretest "github.com/endpointkit/endpointkit/variable/storetest"
)

func TestVariableStoreConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			varstoretest.Run(t, func(t *testing.T) variable.Store { return b.open(t).Variables() })
		})
	}
}

func TestEndpointStoreConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			epstoretest.Run(t, func(t *testing.T) endpoint.Store { return b.open(t).Endpoints() })
		})
	}
}
