package httpapi

import (
	"net/http"

	"github.com/endpointkit/endpointkit/endpoint"
)

// materializeRequest is the body of POST .../materialize: empty, or an
// empty object; the refresh takes no options.
type materializeRequest struct{}

// materializeEndpoint refreshes a materialized endpoint's stored table
// synchronously and answers the endpoint, whose materialization object
// then says completed. The refresh is admitted as a run (Service.Admit):
// a stored key's inline budget and the project's limits count it, a
// refusal is 429 naming the limit. A failed refresh is the Service's 502, whose detail
// leaks no engine internals.
func (h *handler) materializeEndpoint(w http.ResponseWriter, r *http.Request, project string) error {
	var req materializeRequest
	if err := h.decode(w, r, &req, true); err != nil {
		return err
	}
	name := r.PathValue("name")
	// A refresh computes the query: it is admitted as a run is, charged
	// once to the caller's inline budget and to the project's, whose slot
	// it holds while it builds.
	adm, err := h.admitRun(w, r, project, endpoint.Ask{Act: endpoint.ActRefresh, Endpoint: name})
	if err != nil {
		return err
	}
	err = h.svc.Materialize(r.Context(), project, name)
	adm.Release()
	// The refresh may have outlasted the server's WriteTimeout (it is
	// bounded by RefreshTimeout): the answer, or its error, gets a write
	// deadline of its own, as a run's does.
	h.writeDeadline(w)
	if err != nil {
		return err
	}
	e, err := h.svc.Get(r.Context(), project, name)
	if err != nil {
		return err
	}
	return h.reply(w, r, http.StatusOK, h.view(project, e))
}
