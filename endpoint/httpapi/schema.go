package httpapi

import (
	"net/http"

	"github.com/endpointkit/endpointkit/endpoint"
)

// getSchema answers GET schema: the tables and columns the project's
// queries may read (endpoint.Service.Schema), as {"results": [tables]}.
// An embed token may not call it: it shows what the project's data holds.
func (h *handler) getSchema(w http.ResponseWriter, r *http.Request, project string) error {
	tables, err := h.svc.Schema(r.Context(), project)
	if err != nil {
		return err
	}
	return h.reply(w, r, http.StatusOK, listBody[endpoint.SchemaTable]{Results: tables})
}
