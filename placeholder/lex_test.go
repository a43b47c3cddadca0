package placeholder

import (
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScanOpenErrors(t *testing.T) {
	tests := []struct {
		name string
		lx   engine.Lexical
		src  string
		off  int
		err  string // the SyntaxError's Msg
	}{
		{"unclosed literal", anyReading, "x = 'a", 4, "string literal starting with ' is never closed"},
		{"backslash escape", anyReading, `x = 'C:\' || 'y'`, 15, "string literal starting with ' is never closed"},
		{"unclosed identifier", anyReading, "x = `a", 4, "quoted identifier starting with ` is never closed"},
		{"unclosed block comment", anyReading, "x /* a *", 2, "block comment /* is never closed"},
		{"unclosed E string", engine.PostgreSQL.Lexical(), `x = E'a\'`, 4, "string literal starting with E' is never closed"},
		{"unclosed dollar quote", engine.PostgreSQL.Lexical(), "x = $q$ a $$", 4, "dollar-quoted string starting with $q$ is never closed"},
		{"unclosed nested comment", engine.PostgreSQL.Lexical(), "/* a /* b */ c", 0, "block comment /* is never closed"},
		{"unclosed double-quoted string", engine.MySQL.Lexical(), `x = "a\"`, 4, `string literal starting with " is never closed`},
		{"unclosed bracket name", engine.SQLite.Lexical(), "x = [a", 4, "quoted identifier starting with [ is never closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ScanFor(tt.lx, tt.src)
			var se *SyntaxError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.err, se.Msg)
			assert.Equal(t, tt.off, se.Offset)
		})
	}
}

func TestPositionerAt(t *testing.T) {
	// Each source is asked for the offset of every rune in order, then
	// backwards, as Scan asks forwards and a new scan may start over; each
	// answer must be recount's. Callers ask only for rune starts (the
	// offset of an ASCII byte or just past one).
	srcs := []string{
		"",
		"a\nbc\n\nd",
		"é\nü x\r\ny",
		"\xff\xfe\n\xe2\x82\xac!", // invalid bytes and a three-byte rune
		"\xe2\x82\n!",             // a rune cut short by a newline
	}
	for _, src := range srcs {
		var offs []int
		for off := range src {
			offs = append(offs, off)
		}
		offs = append(offs, len(src))
		pos := positioner{src: src}
		for _, off := range offs {
			line, col := pos.at(off)
			wl, wc := recount(src, off)
			got, want := ([2]int{line, col}), ([2]int{wl, wc})
			assert.Equal(t, want, got, "%q at %d forwards: ([2]int{line, col})", src, off)
		}
		for k := len(offs) - 1; k >= 0; k-- {
			off := offs[k]
			line, col := pos.at(off)
			wl, wc := recount(src, off)
			got, want := ([2]int{line, col}), ([2]int{wl, wc})
			assert.Equal(t, want, got, "%q at %d backwards: ([2]int{line, col})", src, off)
		}
	}
}
