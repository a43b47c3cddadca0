package editor_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/endpointkit/endpointkit/endpoint/editor"
)

// A host mounts the page beside its API, here the API under /analytics
// and the page under /analytics/editor/.
func ExampleNew() {
	mux := http.NewServeMux()
	// mux.Handle("/analytics/", httpapi.New(svc, keys, httpapi.WithPrefix("/analytics")))
	mux.Handle("/analytics/editor/", http.StripPrefix("/analytics/editor", editor.New(editor.WithAPI("/analytics"))))

	for _, path := range []string{"/analytics/editor/", "/analytics/editor/app.js"} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		fmt.Println(path, rec.Code, rec.Header().Get("Content-Type"))
	}
	// Output:
	// /analytics/editor/ 200 text/html; charset=utf-8
	// /analytics/editor/app.js 200 text/javascript; charset=utf-8
}
