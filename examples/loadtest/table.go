package main

import (
	"fmt"
	"io"
	"strconv"
	"time"
)

// tableHeader is the table's first line.
const tableHeader = "| endpoint | concurrency | library p50 | library p99 | handler p50 | handler p99 | library req/s | handler req/s | p50 library/handler | req/s library/handler | CPU/request library/handler | switches/request library/handler |"

// writeTable writes rows as a markdown table.
func writeTable(w io.Writer, rows []*row) {
	fmt.Fprintln(w, tableHeader)
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		l, h := r.libStats, r.hdlStats
		cpu := "unknown"
		if l.cpuPerReq > 0 && h.cpuPerReq > 0 {
			cpu = fmt.Sprintf("%s / %s = %s", formatDuration(l.cpuPerReq), formatDuration(h.cpuPerReq),
				formatRatio(float64(l.cpuPerReq), float64(h.cpuPerReq)))
		}
		switches := "unknown"
		if l.switchesPerReq >= 0 && h.switchesPerReq >= 0 {
			switches = fmt.Sprintf("%.2f / %.2f = %s", l.switchesPerReq, h.switchesPerReq,
				formatRatio(l.switchesPerReq, h.switchesPerReq))
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.q.label, r.c,
			formatDuration(l.p50), formatDuration(l.p99), formatDuration(h.p50), formatDuration(h.p99),
			formatRate(l.perSec), formatRate(h.perSec),
			formatRatio(float64(l.p50), float64(h.p50)), formatRatio(l.perSec, h.perSec), cpu, switches)
	}
}

// formatDuration writes d in microseconds below a millisecond, else in
// milliseconds with three significant digits: 720 us, 1.63 ms, 24.5 ms,
// 105 ms.
func formatDuration(d time.Duration) string {
	switch ms := float64(d) / float64(time.Millisecond); {
	case d < time.Millisecond:
		return fmt.Sprintf("%d us", d.Microseconds())
	case ms < 10:
		return fmt.Sprintf("%.2f ms", ms)
	case ms < 100:
		return fmt.Sprintf("%.1f ms", ms)
	default:
		return fmt.Sprintf("%.0f ms", ms)
	}
}

// formatRate writes a rate of requests a second: a whole number with
// thousands separated (1,150), one decimal below 100 (41.3).
func formatRate(r float64) string {
	if r < 100 {
		return strconv.FormatFloat(r, 'f', 1, 64)
	}
	s := strconv.FormatInt(int64(r+0.5), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// formatRatio writes a/b as 3.21x, or "n/a" when b is zero.
func formatRatio(a, b float64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2fx", a/b)
}
