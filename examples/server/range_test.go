package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestNumbersEveryEngineHolds: a Number compared with an integer
// expression, which PostgreSQL binds as int4, answers a 400 naming the
// variable when the value is out of int4's range (it answered 502
// execution_failed); the engines that hold it as given answer 200.
func TestNumbersEveryEngineHolds(t *testing.T) {
	for name, args := range valueEngines {
		t.Run(name, func(t *testing.T) { numbersHeld(t, name, args) })
	}
}

// numbersHeld is TestNumbersEveryEngineHolds on the engine name, which the
// flags args gives start.
func numbersHeld(t *testing.T, name string, args func(t *testing.T) []string) {
	const (
		varID  = "0b6f2c1e-4d3a-4f5b-8c7d-9e0f1a2b3c4d"
		create = `{"name": "short_events", "query": {"kind": "HogQLQuery",
			"query": "SELECT count(*) AS n FROM events WHERE length(event) < {variables.max_len}",
			"variables": {"` + varID + `": {"variableId": "` + varID + `", "code_name": "max_len"}}}}`
	)
	s := start(t, append(args(t), "-api-key", "k", "-demo-events", "200"), nil)
	base := s.url() + "/api/projects/1"
	saveWithVariable(t, base, `{"id": "`+varID+`", "name": "Max len", "type": "Number"}`, create)
	status, body := call(t, "POST", base+"/endpoints/short_events/run", "k", `{"variables": {"max_len": 100}}`)
	if got, want := status, 200; got != want {
		t.Fatalf("%v: status = %v, want %v", body, got, want)
	}
	for _, v := range []string{"3000000000", "-3000000000", "1e300"} {
		status, body = call(t, "POST", base+"/endpoints/short_events/run", "k", `{"variables": {"max_len": `+v+`}}`)
		if name != "postgres" {
			got, want := status, 200
			assert.Equal(t, want, got, "%s: %s: status", v, body)
			continue
		}
		detail := invalidValue(t, v, status, body)
		assert.Contains(t, detail, "'max_len'", "%v", v)
		assert.Contains(t, detail, "int4", "%v", v)
	}
}
