package materialize

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTableName(t *testing.T) {
	cases := []struct {
		id      string
		version int
		want    string
	}{
		{"0190d6a4-8c6e-7b3f-9d41-2f6c1e5a7b90", 3, "endpointkit_mat_0190d6a48c6e7b3f9d412f6c1e5a7b90_v3"},
		{"Daily Revenue!", 1, "endpointkit_mat_dailyrevenue_v1"},
		{`x"; DROP TABLE events; --`, 2, "endpointkit_mat_xdroptableevents_v2"},
		{"", 7, "endpointkit_mat__v7"},
	}
	for _, c := range cases {
		got := TableName(c.id, c.version)
		require.Equal(t, c.want, got)
		require.LessOrEqual(t, len(got)+len("_next"), 63)
	}
}
