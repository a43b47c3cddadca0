package httpapi

import (
	"net/http"

	"github.com/endpointkit/endpointkit/endpoint"
)

// runQuery answers POST query/: a query that is not saved, run with test
// values (endpoint.Service.RunQuery). It costs what a run costs, so it takes a
// run slot of the project; embed tokens may not call it (403), since an
// unsaved query could read anything the project may read.
func (h *handler) runQuery(w http.ResponseWriter, r *http.Request, project string) error {
	var body queryBody // format.go
	if err := h.decode(w, r, &body, false); err != nil {
		return err
	}
	req := body.QueryRequest
	format, err := h.chooseFormat(r, body.Format, req.Debug)
	if err != nil {
		return err
	}
	if format != nil && req.Query != nil && req.Query.Kind != endpoint.KindSQL {
		return errNotRows(nameOf(format))
	}
	adm, err := h.admitRun(w, r, project, endpoint.Ask{Act: endpoint.ActQuery, Query: &req})
	if err != nil {
		return err
	}
	defer adm.Release()
	res, err := h.svc.RunQuery(r.Context(), project, req)
	adm.Release() // as a run's: writing the answer holds no slot
	if err != nil {
		return err
	}
	h.writeDeadline(w)
	return h.answer(w, r, format, res, res.Columns, res.Types, res.Results, res.HasMore, "")
}
