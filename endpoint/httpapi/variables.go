package httpapi

import (
	"net/http"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/variable"
)

func (h *handler) createVariable(w http.ResponseWriter, r *http.Request, project string) error {
	var v variable.Variable
	if err := h.decode(w, r, &v, false); err != nil {
		return err
	}
	v, err := h.svc.CreateVariable(r.Context(), project, v)
	if err != nil {
		return err
	}
	return h.reply(w, r, http.StatusCreated, v)
}

func (h *handler) listVariables(w http.ResponseWriter, r *http.Request, project string) error {
	list, err := h.svc.ListVariables(r.Context(), project)
	if err != nil {
		return err
	}
	if list == nil {
		list = []variable.Variable{}
	}
	return h.reply(w, r, http.StatusOK, listBody[variable.Variable]{Results: list})
}

func (h *handler) getVariable(w http.ResponseWriter, r *http.Request, project string) error {
	v, err := h.svc.GetVariable(r.Context(), project, r.PathValue("id"))
	if err != nil {
		return err
	}
	return h.reply(w, r, http.StatusOK, v)
}

func (h *handler) updateVariable(w http.ResponseWriter, r *http.Request, project string) error {
	var patch endpoint.VariablePatch
	if err := h.decode(w, r, &patch, false); err != nil {
		return err
	}
	v, err := h.svc.UpdateVariable(r.Context(), project, r.PathValue("id"), patch)
	if err != nil {
		return err
	}
	return h.reply(w, r, http.StatusOK, v)
}

func (h *handler) deleteVariable(w http.ResponseWriter, r *http.Request, project string) error {
	if err := h.svc.DeleteVariable(r.Context(), project, r.PathValue("id")); err != nil {
		return err
	}
	noContent(w)
	return nil
}
