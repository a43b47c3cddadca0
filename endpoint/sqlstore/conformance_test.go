package sqlstore

import (
	"testing"

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
