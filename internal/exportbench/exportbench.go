// Package exportbench holds what the export benchmarks and memory tests of
// endpoint/httpapi and endpoint/chdb share: a ResponseWriter that keeps
// nothing, the peak growth of the heap in use and of resident memory while
// a function runs, the library-against-direct benchmark loop, and the value
// formatting of a host that writes CSV without the library.
package exportbench

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/internal/cputime"
)

// Discard is a ResponseWriter that keeps nothing but the status, the
// headers and the byte count.
type Discard struct {
	Head   http.Header
	Status int
	N      int64
}

// NewDiscard returns a Discard with empty headers.
func NewDiscard() *Discard { return &Discard{Head: http.Header{}} }

// Header returns the headers set so far.
func (d *Discard) Header() http.Header { return d.Head }

// WriteHeader keeps the status.
func (d *Discard) WriteHeader(status int) { d.Status = status }

// Write counts b and drops it.
func (d *Discard) Write(b []byte) (int, error) {
	d.N += int64(len(b))
	return len(b), nil
}

// statm reads the process's resident memory in bytes (Linux) without
// allocating, so that sampling it does not grow the heap it samples beside.
type statm struct {
	f   *os.File
	buf [128]byte
}

func openStatm() *statm {
	f, err := os.Open("/proc/self/statm")
	if err != nil {
		return &statm{}
	}
	return &statm{f: f}
}

// rss is the resident memory in bytes, 0 when unknown.
func (s *statm) rss() uint64 {
	if s.f == nil {
		return 0
	}
	n, _ := s.f.ReadAt(s.buf[:], 0)
	// "size resident shared ...": the second field, in pages.
	b := s.buf[:n]
	i := 0
	for i < len(b) && b[i] != ' ' {
		i++
	}
	i++
	var pages uint64
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		pages = pages*10 + uint64(b[i]-'0')
	}
	return pages * uint64(os.Getpagesize())
}

func (s *statm) close() {
	if s.f != nil {
		_ = s.f.Close()
	}
}

// RSS is the process's resident memory in bytes (Linux), 0 when unknown.
func RSS() uint64 {
	s := openStatm()
	defer s.close()
	return s.rss()
}

// PeakGrowth runs f and returns the peak growth, over their values before
// it, of the Go heap in use and of the process's resident memory (an
// engine's own memory in the process included), sampled every millisecond.
// The sampling itself allocates nothing.
func PeakGrowth(f func()) (heap, res uint64) {
	s := openStatm()
	defer s.close()
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	baseRSS := s.rss()
	var peakHeap, peakRSS atomic.Uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > base.HeapInuse && m.HeapInuse-base.HeapInuse > peakHeap.Load() {
				peakHeap.Store(m.HeapInuse - base.HeapInuse)
			}
			if r := s.rss(); r > baseRSS && r-baseRSS > peakRSS.Load() {
				peakRSS.Store(r - baseRSS)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(stop)
	<-done
	return peakHeap.Load(), peakRSS.Load()
}

// Alternate runs library and direct once each in every one of b's
// iterations, library first in even iterations and direct first in odd
// ones, so that both see the same load of a shared machine and neither is
// always the one that runs after the other (on a warmer cache, or in a
// collection the other's garbage started), reports their time ratio as
// "library/direct" and, where the process's CPU time can be read, the
// ratio of the CPU time each side used (the collector's work it caused
// included) as "library/direct-cpu", which a loaded machine disturbs less
// than the time; it returns the time each took in all.
func Alternate(b *testing.B, library, direct func()) (lib, dir time.Duration) {
	var cpu [2]time.Duration
	cpuOK := true
	i := 0
	for b.Loop() {
		for j := range 2 {
			side := (i + j) % 2
			f, t := library, &lib
			if side == 1 {
				f, t = direct, &dir
			}
			c0, ok0 := cputime.Process()
			start := time.Now()
			f()
			*t += time.Since(start)
			c1, ok1 := cputime.Process()
			cpu[side] += c1 - c0
			cpuOK = cpuOK && ok0 && ok1
		}
		i++
	}
	b.ReportMetric(float64(lib)/float64(dir), "library/direct")
	if cpuOK && cpu[1] > 0 {
		b.ReportMetric(float64(cpu[0])/float64(cpu[1]), "library/direct-cpu")
	}
	return lib, dir
}

// Versus is a whole export benchmark of library against direct: one
// library run to warm the caches, the peak growth of the heap in use and
// of resident memory during a second one ("heap-MiB", "rss-MiB"), then the
// two alternated (Alternate) with their times per run ("library-ms",
// "direct-ms").
func Versus(b *testing.B, library, direct func()) {
	library() // warm: the engine's caches, the Service's compiled version
	heap, res := PeakGrowth(library)
	lib, dir := Alternate(b, library, direct)
	b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(res)/(1<<20), "rss-MiB")
	b.ReportMetric(float64(lib.Milliseconds())/float64(b.N), "library-ms")
	b.ReportMetric(float64(dir.Milliseconds())/float64(b.N), "direct-ms")
}

// FormatCSV writes into rec the text of each value of row as a host
// writing CSV without the library would: NULL empty, numbers in Go's
// shortest form, times in RFC 3339.
func FormatCSV(rec []string, row []any) {
	for i, v := range row {
		switch x := v.(type) {
		case nil:
			rec[i] = ""
		case int64:
			rec[i] = strconv.FormatInt(x, 10)
		case float64:
			rec[i] = strconv.FormatFloat(x, 'g', -1, 64)
		case string:
			rec[i] = x
		case []byte:
			rec[i] = string(x)
		case time.Time:
			rec[i] = x.Format(time.RFC3339)
		default:
			rec[i] = fmt.Sprint(x)
		}
	}
}
