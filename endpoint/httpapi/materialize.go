package httpapi

import (
	"net/http"
)

// materializeRequest is the body of POST .../materialize: empty, or an
// empty object; the refresh takes no options.
type materializeRequest struct{}

// materializeEndpoint refreshes a materialized endpoint's stored table
// synchronously and answers the endpoint, whose materialization object
// then says completed. A failed refresh is the Service's 502, whose detail
// leaks no engine internals.
func (h *handler) materializeEndpoint(w http.ResponseWriter, r *http.Request, project string) error {
	var req materializeRequest
	if err := h.decode(w, r, &req, true); err != nil {
		return err
	}
	name := r.PathValue("name")
	err := h.svc.Materialize(r.Context(), project, name)
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
