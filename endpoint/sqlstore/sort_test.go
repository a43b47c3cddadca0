package sqlstore

import (
	"slices"
	"strings"

	"github.com/endpointkit/endpointkit/endpoint"
)

func sortByName(es []endpoint.Endpoint) {
	slices.SortFunc(es, func(a, b endpoint.Endpoint) int { return strings.Compare(a.Name, b.Name) })
}
