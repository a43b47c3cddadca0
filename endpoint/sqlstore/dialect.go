package sqlstore

import (
	"strings"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// rebind rewrites the '?' markers of q into the engine's marker style. The
// store's statements are fixed text written here, with no '?' inside
// literals, so a plain scan is exact; user values never pass through it.
func rebind(e engine.Engine, q string) string {
	if !e.Numbered() {
		return q
	}
	b := make([]byte, 0, len(q)+8)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] != '?' {
			b = append(b, q[i])
			continue
		}
		n++
		b = e.Marker(b, n, "")
	}
	return string(b)
}

// storeEngine returns e's store side, or ErrEngine.
func storeEngine(e engine.Engine) (engine.Store, error) {
	if se, ok := e.(engine.Store); ok {
		return se, nil
	}
	name := "<nil>"
	if e != nil {
		name = e.Name()
	}
	return nil, &unsupported{name}
}

type unsupported struct{ name string }

func (u *unsupported) Error() string {
	return ErrEngine.Error() + ": " + strings.TrimSpace(u.name) + " (want sqlite, postgresql or mysql)"
}

func (u *unsupported) Unwrap() error { return ErrEngine }
