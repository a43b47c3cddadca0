package equivalence

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/mcp"
)

// MCP as a way a run happens: the endpoint's tool called by the SDK's
// client over the SDK's in-memory transport, served by package
// endpoint/mcp for project 1 as stdio serves it.

// mcpSessions holds a client session per Service, opened on first use and
// kept for the test binary's life (in-memory pipes: nothing to clean up
// on disk).
var mcpSessions struct {
	sync.Mutex
	m map[*endpoint.Service]*sdk.ClientSession
}

func mcpSession(ctx context.Context, svc *endpoint.Service) (*sdk.ClientSession, error) {
	mcpSessions.Lock()
	defer mcpSessions.Unlock()
	if s := mcpSessions.m[svc]; s != nil {
		return s, nil
	}
	st, ct := sdk.NewInMemoryTransports()
	if _, err := mcp.Server(svc, "1", mcp.WithLimiter(nil)).Connect(context.WithoutCancel(ctx), st, nil); err != nil {
		return nil, err
	}
	s, err := sdk.NewClient(&sdk.Implementation{Name: "equivalence", Version: "1"}, nil).Connect(context.WithoutCancel(ctx), ct, nil)
	if err != nil {
		return nil, err
	}
	if mcpSessions.m == nil {
		mcpSessions.m = map[*endpoint.Service]*sdk.ClientSession{}
	}
	mcpSessions.m[svc] = s
	return s, nil
}

// mcpRun runs the endpoint name of project 1 through its tool: the answer
// decoded from the structured content, or the tool error as the
// *endpoint.Error it reports (status, code, detail).
func mcpRun(ctx context.Context, svc *endpoint.Service, name string, vars map[string]any, limit int, refresh string) (*endpoint.RunResult, error) {
	s, err := mcpSession(ctx, svc)
	if err != nil {
		return nil, err
	}
	args := map[string]any{"variables": vars}
	if limit > 0 {
		args["limit"] = limit
	}
	if refresh != "" {
		args["refresh"] = refresh
	}
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("MCP protocol error (want a tool error or an answer): %w", err)
	}
	// The answer's JSON as the tool wrote it (its text content; an error's
	// text is its detail): the
	// structured content a client decodes has lost how numbers were
	// written (256.0 in a float column).
	var b []byte
	if !res.IsError && len(res.Content) == 1 {
		if text, ok := res.Content[0].(*sdk.TextContent); ok {
			b = []byte(text.Text)
		}
	}
	if b == nil {
		if b, err = json.Marshal(res.StructuredContent); err != nil {
			return nil, err
		}
	}
	if res.IsError {
		var e struct {
			Detail, Code string
			Status       int
		}
		if err := json.Unmarshal(b, &e); err != nil {
			return nil, err
		}
		return nil, &endpoint.Error{Status: e.Status, Code: e.Code, Detail: e.Detail}
	}
	return decodeRun(b)
}

// decodeRun decodes the JSON of a RunResult, SQL rows as answerOf reads
// them.
func decodeRun(b []byte) (*endpoint.RunResult, error) {
	var out endpoint.RunResult
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	// The results as their JSON, for their JSON kinds (answerOf decodes
	// the rows).
	var rows struct {
		Results json.RawMessage `json:"results"`
	}
	if json.Unmarshal(b, &rows) == nil && len(rows.Results) > 0 && rows.Results[0] == '[' {
		out.Results = rows.Results
	}
	return &out, nil
}

// mismatch starts the error of an answer that a way gave differently from
// the Go API; compare fails on it whichever database answered.
const mismatch = "MISMATCH: "

// viaMCP runs r through the endpoint's MCP tool and requires the answer
// the Go API gives the same request, as JSON (what the HTTP API sends: a
// timestamp in RFC 3339). Both may come from the result cache the ways
// before filled (an MCP request that asked for other values would miss
// it), so that the matrix costs the engines little more.
var viaMCP = way{"mcp tool", func(ctx context.Context, svc *endpoint.Service, _ *dialect, s *spec, name string, r run) answer {
	goRes, goAnswer := runReq(ctx, svc, s, name, r, endpoint.RunRequest{})
	if goRes != nil {
		b, err := json.Marshal(goRes)
		if err == nil {
			goRes, err = decodeRun(b)
		}
		if err != nil {
			return answer{err: "the Go answer as JSON: " + err.Error()}
		}
		goAnswer = answerOf(s, goRes, nil)
	}
	res, err := mcpRun(ctx, svc, name, r.vars, r.limit, "")
	a := marked(answerOf(s, res, err), res)
	var goErr error
	if goRes == nil {
		goErr = fmt.Errorf("%s", goAnswer.err)
	}
	switch {
	case a.err != "" && goAnswer.err == "":
		a.err = mismatch + "MCP refused what the Go API answers: " + a.err
	case a.err == "" && goAnswer.err != "":
		a.err = mismatch + "MCP answered what the Go API refuses: " + ruleVerdict(goErr)
	case a.err == "":
		d := diff(a, goAnswer)
		if d == "" {
			d = shapeDiff(a, goAnswer)
		}
		if d != "" {
			a.err = mismatch + "MCP differs from the Go API: " + d
		}
	}
	return a
}}

// viaMCPQuery runs r as an agent does: the spec's SQL, not saved, through
// the _run_query tool with its values by code name (Service.RunAdHoc, the
// variables' types the project's), or an insight spec's query through the
// same tool. Its answer is marked like any way's (project 2's rows in it
// fail the matrix), and must be the editor's query API's answer to the
// same query and values: a tool that ran something else (values dropped,
// another query) is a mismatch whichever database answered.
var viaMCPQuery = way{"mcp _run_query", func(ctx context.Context, svc *endpoint.Service, d *dialect, s *spec, _ string, r run) answer {
	sess, err := mcpSession(ctx, svc)
	if err != nil {
		return answer{err: err.Error()}
	}
	args := map[string]any{"variables": r.vars}
	if s.kind == endpoint.KindSQL {
		args["sql"] = s.sql(d)
	} else {
		args["query"] = json.RawMessage(s.insight)
	}
	if r.limit > 0 {
		args["limit"] = r.limit
	}
	res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: mcp.QueryTool, Arguments: args})
	if err != nil {
		return answer{err: "MCP protocol error (want a tool error or an answer): " + err.Error()}
	}
	var b []byte
	if len(res.Content) == 1 {
		if text, ok := res.Content[0].(*sdk.TextContent); ok {
			b = []byte(text.Text)
		}
	}
	if res.IsError {
		var e struct {
			Detail, Code string
			Status       int
		}
		if err := json.Unmarshal(b, &e); err != nil {
			return answer{err: "the tool error is not JSON: " + string(b)}
		}
		return answerOf(s, nil, &endpoint.Error{Status: e.Status, Code: e.Code, Detail: e.Detail})
	}
	out, err := decodeRun(b)
	if err != nil {
		return answer{err: "the answer is not a run's JSON: " + err.Error()}
	}
	a := marked(answerOf(s, out, nil), out)
	if a.err != "" {
		return a
	}
	ed := editorJSON(ctx, svc, d, s, r)
	switch {
	case ed.err != "":
		a.err = mismatch + "_run_query answered what the editor's query API refuses: " + ed.err
	case diff(a, ed) != "":
		a.err = mismatch + "_run_query differs from the editor's query API: " + diff(a, ed)
	}
	return a
}}

// editorJSON is the editor way's answer to r as the HTTP API and the MCP
// tools send it: the query API's result through its JSON (a timestamp in
// RFC 3339), so that it compares with a tool's answer.
func editorJSON(ctx context.Context, svc *endpoint.Service, d *dialect, s *spec, r run) answer {
	req := editorRequest(d, s, r)
	res, err := svc.RunQuery(ctx, "1", req)
	if err != nil {
		return answerOf(s, nil, err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return answer{err: "the query API's answer as JSON: " + err.Error()}
	}
	out, err := decodeRun(b)
	if err != nil {
		return answer{err: "the query API's answer as JSON: " + err.Error()}
	}
	return answerOf(s, out, nil)
}
