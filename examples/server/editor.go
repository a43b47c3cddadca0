package main

import (
	"fmt"
	"io"
	"net/http"

	"github.com/endpointkit/endpointkit/endpoint/editor"
)

// routeEditor serves the editor page at the root of mux, proposing the
// server's first project.
func routeEditor(mux *http.ServeMux, cfg config) {
	mux.Handle("/", editor.New(editor.WithProject(cfg.project), editor.WithDialect(cfg.driver)))
}

// printEditor prints where the editor page is.
func printEditor(w io.Writer, base string) {
	fmt.Fprintf(w, "Editor: open %s/ in a browser and give it the API key (kept in that tab only).\n\n", base)
}
