package main

import (
	"fmt"
	"io"
	"net/http"

	"github.com/endpointkit/endpointkit/endpoint/editor"
)

// withEditor serves the API under /api/ and the editor page at the root,
// proposing the server's first project.
func withEditor(api http.Handler, cfg config) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/api/", api)
	mux.Handle("/", editor.New(editor.WithProject(cfg.project), editor.WithDialect(cfg.driver)))
	return mux
}

// printEditor prints where the editor page is.
func printEditor(w io.Writer, base string) {
	fmt.Fprintf(w, "Editor: open %s/ in a browser and give it the API key (kept in that tab only).\n\n", base)
}
