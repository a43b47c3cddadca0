package variable_test

import (
	"testing"

	"github.com/endpointkit/endpointkit/variable"
	"github.com/endpointkit/endpointkit/variable/storetest"
)

func TestMemoryStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) variable.Store { return variable.NewMemoryStore() })
}
