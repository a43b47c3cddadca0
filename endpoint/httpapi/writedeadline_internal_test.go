package httpapi

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"
)

// deadlineWriter is a ResponseWriter that records the write deadline set.
type deadlineWriter struct {
	http.ResponseWriter
	set time.Time
}

func (d *deadlineWriter) SetWriteDeadline(t time.Time) error { d.set = t; return nil }

// TestWriteDeadlineFindsTheServersWriter: the deadline reaches a writer
// that can take it through the wrappers that unwrap to it, as
// http.ResponseController would; a writer that cannot take one is left
// without asking the controller (which formats an error each time).
func TestWriteDeadlineFindsTheServersWriter(t *testing.T) {
	h := &handler{cfg: config{writeTimeout: time.Minute}}
	dw := &deadlineWriter{ResponseWriter: httptest.NewRecorder()}
	h.writeDeadline(&responseWriter{ResponseWriter: dw})
	if dw.set.IsZero() {
		t.Fatal("the write deadline did not reach the writer under the wrapper")
	}
	if !setsWriteDeadline(dw) || setsWriteDeadline(httptest.NewRecorder()) || setsWriteDeadline(&responseWriter{ResponseWriter: httptest.NewRecorder()}) {
		t.Fatal("setsWriteDeadline disagrees with http.ResponseController")
	}
	for _, w := range []http.ResponseWriter{dw, httptest.NewRecorder(), &responseWriter{ResponseWriter: httptest.NewRecorder()}} {
		err := http.NewResponseController(w).SetWriteDeadline(time.Now())
		if setsWriteDeadline(w) != (err == nil) {
			t.Fatalf("%T: setsWriteDeadline %v, the controller's error %v", w, setsWriteDeadline(w), err)
		}
	}
	rec := &responseWriter{ResponseWriter: httptest.NewRecorder()}
	if n := testing.AllocsPerRun(100, func() { h.writeDeadline(rec) }); n != 0 {
		t.Fatalf("writeDeadline on a writer without deadlines allocates %v times, want 0", n)
	}
}

// TestNewRequestID: ids are 26 letters of crypto/rand.Text's alphabet and
// never repeat.
func TestNewRequestID(t *testing.T) {
	shape := regexp.MustCompile(`^[A-Z2-7]{26}$`)
	seen := map[string]bool{}
	for range 10000 {
		id := newRequestID()
		if !shape.MatchString(id) {
			t.Fatalf("request id %q is not 26 base32 letters", id)
		}
		if seen[id] {
			t.Fatalf("request id %q made twice", id)
		}
		seen[id] = true
	}
}
