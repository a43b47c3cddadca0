package httpapi

import (
	"net/http"
	"net/url"

	"github.com/endpointkit/endpointkit/endpoint"
)

// endpointView is an endpoint as the API shows it: the record plus the path
// that runs it, so a client never has to assemble URLs.
type endpointView struct {
	endpoint.Endpoint
	EndpointPath string `json:"endpoint_path"`
}

func (h *handler) view(project string, e endpoint.Endpoint) endpointView {
	return endpointView{
		Endpoint:     e,
		EndpointPath: h.cfg.prefix + "/api/projects/" + url.PathEscape(project) + "/endpoints/" + url.PathEscape(e.Name) + "/run",
	}
}

// listBody is the envelope of every list, as in the reference API.
type listBody[T any] struct {
	Results []T `json:"results"`
}

func (h *handler) createEndpoint(w http.ResponseWriter, r *http.Request, project string) error {
	var req endpoint.CreateRequest
	if err := h.decode(w, r, &req, false); err != nil {
		return err
	}
	// The key must be allowed the new name; a materialized endpoint's
	// first refresh starts at once, and is charged as a refresh.
	adm, err := h.admitRun(w, r, project, endpoint.Ask{Act: endpoint.ActSave, Endpoint: req.Name, Create: &req})
	if err != nil {
		return err
	}
	e, err := h.svc.Create(r.Context(), project, req)
	adm.Release()
	if err != nil {
		return err
	}
	return h.reply(w, r, http.StatusCreated, h.view(project, e))
}

func (h *handler) listEndpoints(w http.ResponseWriter, r *http.Request, project string) error {
	list, err := h.svc.List(r.Context(), project)
	if err != nil {
		return err
	}
	list = visibleTo(keyOf(r.Context()), list)
	views := make([]endpointView, len(list))
	for i, e := range list {
		views[i] = h.view(project, e)
	}
	return h.reply(w, r, http.StatusOK, listBody[endpointView]{Results: views})
}

func (h *handler) getEndpoint(w http.ResponseWriter, r *http.Request, project string) error {
	e, err := h.svc.Get(r.Context(), project, r.PathValue("name"))
	if err != nil {
		return err
	}
	return h.reply(w, r, http.StatusOK, h.view(project, e))
}

func (h *handler) updateEndpoint(w http.ResponseWriter, r *http.Request, project string) error {
	var req endpoint.UpdateRequest
	if err := h.decode(w, r, &req, false); err != nil {
		return err
	}
	if req.Name != nil {
		if err := keyAllowsName(keyOf(r.Context()), *req.Name); err != nil {
			return err
		}
	}
	// A save that starts a refresh is charged as one.
	adm, err := h.admitRun(w, r, project, endpoint.Ask{Act: endpoint.ActSave, Endpoint: r.PathValue("name"), Update: &req})
	if err != nil {
		return err
	}
	e, err := h.svc.Update(r.Context(), project, r.PathValue("name"), req)
	adm.Release()
	if err != nil {
		return err
	}
	return h.reply(w, r, http.StatusOK, h.view(project, e))
}

func (h *handler) deleteEndpoint(w http.ResponseWriter, r *http.Request, project string) error {
	if err := h.svc.Delete(r.Context(), project, r.PathValue("name")); err != nil {
		return err
	}
	noContent(w)
	return nil
}

func (h *handler) runEndpoint(w http.ResponseWriter, r *http.Request, project string) error {
	var body runBody // format.go
	if err := h.decode(w, r, &body, true); err != nil {
		return err
	}
	// The request in the body itself, not a copy: what the admission
	// changes in it (Ask.Run) is what runs, as with a copy, and the body
	// is one allocation, not two.
	req := &body.RunRequest
	format, err := h.chooseFormat(r, body.Format, req.Debug)
	if err != nil {
		return err
	}
	// The slot is taken once the request is known to be well formed, so
	// that a malformed one costs the project nothing, and held until the
	// answer is computed: writing it (bounded by max_result_bytes and the
	// write timeout) holds none, so a client that stops reading cannot
	// keep the project's other runs out.
	ask := endpoint.Ask{Act: endpoint.ActRun, Endpoint: r.PathValue("name"), Run: req}
	if format != nil {
		ask.RowsFormat = nameOf(format)
	}
	adm, err := h.admitRun(w, r, project, ask)
	if err != nil {
		return err
	}
	defer adm.Release()
	if streamed(format) {
		return h.runLines(w, r, project, *req, format, adm.Release) // stream_run.go
	}
	res, err := h.svc.Run(r.Context(), project, r.PathValue("name"), *req)
	adm.Release()
	if err != nil {
		return err
	}
	h.writeDeadline(w)
	return h.answer(w, r, format, res, res.Columns, res.Types, res.Results, res.HasMore, res.ExecutionID)
}
