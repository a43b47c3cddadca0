package memstore_test

import (
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/storetest"
)

func TestMemoryKeyStoreConformance(t *testing.T) {
	storetest.RunKeyStore(t, func(t *testing.T) driver.KeyStore { return memstore.NewKeyStore() })
}
