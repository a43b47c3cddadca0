package parquet_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	pq "github.com/parquet-go/parquet-go"

	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/httpapi/parquet"
)

// A host registers the Parquet format on its handler; a run then asks for
// it with {"format": "parquet"} (or Accept: application/vnd.apache.parquet).
func ExampleFormat() {
	dir, _ := os.MkdirTemp("", "parquet-example")
	defer os.RemoveAll(dir)
	env, err := endpointtest.Start(dir, endpointtest.WithDemoEvents(100),
		endpointtest.WithHTTPOptions(httpapi.WithFormat(parquet.Format{})))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer env.Close()
	env.Send("POST", "/endpoints/", `{"name": "events", "query": {"kind": "HogQLQuery", "query": "SELECT event, count(*) AS n FROM events GROUP BY event ORDER BY event"}}`)

	req, _ := http.NewRequest("POST", env.URL("/endpoints/events/run"), strings.NewReader(`{"format": "parquet"}`))
	req.Header.Set("Authorization", "Bearer "+env.Key)
	req.Header.Set("Content-Type", "application/json")
	res, err := env.Server.Client().Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	f, err := pq.OpenFile(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Header.Get("Content-Type"))
	for _, c := range f.Schema().Fields() {
		fmt.Println(c.Name(), c.Type().Kind(), c.Optional())
	}
	// Output:
	// application/vnd.apache.parquet
	// event BYTE_ARRAY true
	// n INT64 true
}
