package httpapi

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
	require.False(t, dw.set.IsZero(), "the write deadline did not reach the writer under the wrapper")
	if !setsWriteDeadline(dw) || setsWriteDeadline(httptest.NewRecorder()) || setsWriteDeadline(&responseWriter{ResponseWriter: httptest.NewRecorder()}) {
		t.Fatal("setsWriteDeadline disagrees with http.ResponseController")
	}
	for _, w := range []http.ResponseWriter{dw, httptest.NewRecorder(), &responseWriter{ResponseWriter: httptest.NewRecorder()}} {
		err := http.NewResponseController(w).SetWriteDeadline(time.Now())
		require.Equal(t, err == nil, setsWriteDeadline(w), "%T: setsWriteDeadline, the controller's error %v", w, err)
	}
	rec := &responseWriter{ResponseWriter: httptest.NewRecorder()}
	require.Equal(t, float64(0), testing.AllocsPerRun(100, func() { h.writeDeadline(rec) }), "writeDeadline on a writer without deadlines allocates")
}

// TestNewRequestID: ids are 26 letters of crypto/rand.Text's alphabet and
// never repeat.
func TestNewRequestID(t *testing.T) {
	shape := regexp.MustCompile(`^[A-Z2-7]{26}$`)
	seen := map[string]bool{}
	for range 10000 {
		id := newRequestID()
		require.True(t, shape.MatchString(id), "request id %q is not 26 base32 letters", id)
		if seen[id] {
			t.Fatalf("request id %q made twice", id)
		}
		seen[id] = true
	}
}
