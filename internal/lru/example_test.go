package lru_test

import (
	"fmt"

	"github.com/endpointkit/endpointkit/internal/lru"
)

// A cache bounded in bytes: each entry weighs its value's length.
func Example() {
	c := lru.New[string, string](10, func(k, _ string) { fmt.Println("evicted", k) })
	c.Add("a", "aaaa", 4)
	c.Add("b", "bbbb", 4)
	c.Get("a") // a is now the most recently used
	c.Add("c", "cccc", 4)
	fmt.Println(c.Len(), c.Size())
	// Output:
	// evicted b
	// 2 8
}
