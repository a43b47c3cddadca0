package httpapi

import (
	"net/http"
	"net/url"

	"github.com/endpointkit/endpointkit/endpoint"
)

// materializeRequest is the body of POST .../materialize: empty, or an
// empty object; the refresh takes no options.
type materializeRequest struct{}

// materializeEndpoint starts a refresh of a materialized endpoint's stored
// table in the background and answers 202 at once, pointing at the
// materialization status (Location, and status_url in the body) whose
// progress then shows the refresh under way (see materializeStarted).
// With ?wait=true it refreshes synchronously and answers the endpoint,
// whose materialization object then says completed. Either way the
// refresh is admitted as a run (Service.Admit) before it starts: a stored
// key's inline budget and the project's limits count it, a refusal is 429
// naming the limit; a synchronous refresh holds the project's slot while
// it builds, a background one is bounded by Config.MaxRefreshes. A failed
// refresh is the Service's 502, whose detail leaks no engine internals.
func (h *handler) materializeEndpoint(w http.ResponseWriter, r *http.Request, project string) error {
	var req materializeRequest
	if err := h.decode(w, r, &req, true); err != nil {
		return err
	}
	wait, err := materializeWait(r)
	if err != nil {
		return err
	}
	name := r.PathValue("name")
	// A refresh computes the query: it is admitted as a run is, charged
	// once to the caller's inline budget and to the project's.
	adm, err := h.admitRun(w, r, project, endpoint.Ask{Act: endpoint.ActRefresh, Endpoint: name})
	if err != nil {
		return err
	}
	if !wait {
		adm.Release() // the build runs in the background, bounded by MaxRefreshes
		return h.materializeStarted(w, r, project)
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

// materializeAccepted is the body of a 202 to POST .../materialize: the
// route of the status to follow, whether the request joined a refresh
// under way, and the status as it is now.
type materializeAccepted struct {
	StatusURL string                         `json:"status_url"`
	Joined    bool                           `json:"joined"`
	Status    endpoint.MaterializationReport `json:"materialization_status"`
}

// materializeWait reads ?wait: absent or false answers at once, true
// waits for the refresh to end.
func materializeWait(r *http.Request) (bool, error) {
	q := r.URL.Query()
	if !q.Has("wait") {
		return false, nil
	}
	switch q.Get("wait") {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, endpoint.NewError(endpoint.ErrInvalid, endpoint.CodeInvalidInput, "wait", "wait must be true or false.")
}

// materializeStarted starts the refresh in the background (joining one
// under way) and answers 202 with the status route.
func (h *handler) materializeStarted(w http.ResponseWriter, r *http.Request, project string) error {
	name := r.PathValue("name")
	started, err := h.svc.StartMaterialize(r.Context(), project, name)
	if err != nil {
		return err
	}
	st, err := h.svc.MaterializationStatus(r.Context(), project, name)
	if err != nil {
		return err
	}
	loc := h.cfg.prefix + "/api/projects/" + url.PathEscape(project) + "/endpoints/" + url.PathEscape(name) + "/materialization_status"
	w.Header().Set("Location", loc)
	return h.reply(w, r, http.StatusAccepted, materializeAccepted{StatusURL: loc, Joined: started.Joined, Status: st})
}
