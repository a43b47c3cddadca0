package httpapi

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/openapi"
)

// opsRoutes are the routes that operate endpoints: their versions, the
// OpenAPI document of running them, their run logs and the state of their
// materialization.
func (h *handler) opsRoutes() {
	h.handle(http.MethodGet, "endpoints/{name}/versions", h.listVersions)
	h.handle(http.MethodGet, "endpoints/{name}/versions/{version}", h.getVersion)
	h.register(http.MethodGet, "endpoints/{name}/openapi.json", h.authorized(h.openAPI, tokenReads))
	h.handle(http.MethodGet, "endpoints/{name}/logs", h.listLogs)
	h.handle(http.MethodGet, "endpoints/{name}/materialization_status", h.materializationStatus)
}

// positiveInt reads a positive integer query or path value; attr names it
// in the 400.
func positiveInt(text, attr string) (int, error) {
	n, err := strconv.Atoi(text)
	if err != nil || n < 1 {
		return 0, endpoint.NewError(endpoint.ErrInvalid, endpoint.CodeInvalidInput, attr,
			attr+" must be a positive integer, got '"+clip(text, maxEchoRunes)+"'.")
	}
	return n, nil
}

func (h *handler) listVersions(w http.ResponseWriter, r *http.Request, project string) error {
	vs, err := h.svc.Versions(r.Context(), project, r.PathValue("name"))
	if err != nil {
		return err
	}
	return h.reply(w, r, http.StatusOK, listBody[endpoint.Version]{Results: vs})
}

func (h *handler) getVersion(w http.ResponseWriter, r *http.Request, project string) error {
	n, err := positiveInt(r.PathValue("version"), "version")
	if err != nil {
		return err
	}
	v, err := h.svc.Version(r.Context(), project, r.PathValue("name"), n)
	if err != nil {
		return err
	}
	return h.reply(w, r, http.StatusOK, v)
}

// openAPI answers the OpenAPI document of running the endpoint
// (?version=N for an older version). A request with an embed token gets
// the token's view: the variables it fixes are not in the request schema.
func (h *handler) openAPI(w http.ResponseWriter, r *http.Request, project string) error {
	n := 0
	if text := r.URL.Query().Get("version"); text != "" || r.URL.Query().Has("version") {
		var err error
		if n, err = positiveInt(text, "version"); err != nil {
			return err
		}
	}
	name := r.PathValue("name")
	rs, err := h.svc.RunSchema(r.Context(), project, name, n)
	if err != nil {
		return err
	}
	opts := openapi.Options{Path: h.cfg.prefix + "/api/projects/" + url.PathEscape(project) + "/endpoints/" + url.PathEscape(name) + "/run", Formats: h.openapiFormats()}
	if h.cfg.baseURL != "" {
		// The path carries the prefix: the server is the host alone.
		opts.ServerURL = h.cfg.baseURL
	}
	if c := claimsOf(r.Context()); c != nil {
		for f := range c.Fixed {
			opts.Fixed = append(opts.Fixed, f)
		}
	}
	return h.reply(w, r, http.StatusOK, openapi.Document(rs, opts))
}

// logsBody is a page of a run log: next is the cursor of the next page
// (pass it as ?before=), null at the end.
type logsBody struct {
	Results []endpoint.RunLogEntry `json:"results"`
	Next    *string                `json:"next"`
}

func (h *handler) listLogs(w http.ResponseWriter, r *http.Request, project string) error {
	q := r.URL.Query()
	limit := 0
	if q.Has("limit") {
		n, err := positiveInt(q.Get("limit"), "limit")
		if err != nil {
			return err
		}
		limit = n
	}
	list, next, err := h.svc.Logs(r.Context(), project, r.PathValue("name"), limit, q.Get("before"))
	if err != nil {
		return err
	}
	body := logsBody{Results: list}
	if next != "" {
		body.Next = &next
	}
	return h.reply(w, r, http.StatusOK, body)
}

func (h *handler) materializationStatus(w http.ResponseWriter, r *http.Request, project string) error {
	st, err := h.svc.MaterializationStatus(r.Context(), project, r.PathValue("name"))
	if err != nil {
		return err
	}
	return h.reply(w, r, http.StatusOK, st)
}
