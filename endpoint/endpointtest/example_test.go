package endpointtest_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/variable"
)

// A host's test saves an endpoint through the Go API and runs it over
// HTTP, as its own clients would. In a test function, endpointtest.New(t)
// does what Start and Close do here.
func Example() {
	dir, err := os.MkdirTemp("", "endpointtest-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	env, err := endpointtest.Start(dir, endpointtest.WithDemoEvents(2000))
	if err != nil {
		log.Fatal(err)
	}
	defer env.Close()

	ctx := context.Background()
	event, err := env.Service.CreateVariable(ctx, env.Project, variable.Variable{Name: "Event", Type: variable.String})
	if err != nil {
		log.Fatal(err)
	}
	q := endpoint.Query{
		Kind:      endpoint.KindSQL,
		SQL:       "SELECT count(*) AS n FROM events WHERE event = {variables.event}",
		Variables: map[string]endpoint.VariableRef{event.ID: {VariableID: event.ID, CodeName: "event"}},
	}
	if _, err := env.Service.Create(ctx, env.Project, endpoint.CreateRequest{Name: "event_count", Query: &q}); err != nil {
		log.Fatal(err)
	}

	status, _, err := env.Send("POST", "/endpoints/event_count/run/", `{"variables": {"event": "purchase"}}`)
	fmt.Println(status, err)
	status, body, _ := env.Send("POST", "/endpoints/event_count/run/", `{"variables": {}}`)
	fmt.Println(status, body)
	// Output:
	// 200 <nil>
	// 400 {"detail":"Required variable(s) 'event' not provided","code":"required_variable_missing","attr":"variables.event"}
}
