package httpapi

import (
	"net/http"

	"github.com/endpointkit/endpointkit/endpoint"
)

// runQuery answers POST query/: a query that is not saved, run with test
// values (endpoint.Service.Query). It costs what a run costs, so it takes a
// run slot of the project; embed tokens may not call it (403), since an
// unsaved query could read anything the project may read.
func (h *handler) runQuery(w http.ResponseWriter, r *http.Request, project string) error {
	var req endpoint.QueryRequest
	if err := h.decode(w, r, &req, false); err != nil {
		return err
	}
	if err := h.admitKey(w, r, project, ""); err != nil {
		return err
	}
	release, err := h.admit(w, project)
	if err != nil {
		return err
	}
	defer release()
	res, err := h.svc.Query(r.Context(), project, req)
	release() // as a run's: writing the answer holds no slot
	if err != nil {
		return err
	}
	h.writeDeadline(w)
	return h.reply(w, r, http.StatusOK, res)
}
