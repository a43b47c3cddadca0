package placeholder

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSkipNonCode(t *testing.T) {
	tests := []struct {
		name string
		src  string
		i    int
		end  int
		what skipped
		err  string // the SyntaxError's Msg; "" for none
	}{
		{"line comment", "a -- b\nc", 2, 7, skippedComment, ""},
		{"line comment on the last line", "a -- b", 2, 6, skippedComment, ""},
		{"block comment", "/* a */b", 0, 7, skippedComment, ""},
		{"empty block comment", "/**/", 0, 4, skippedComment, ""},
		{"string literal", "'it''s' x", 0, 7, skippedQuoted, ""},
		{"backslash escape", `'a\'' x`, 0, 5, skippedQuoted, ""},
		{"quoted identifier", `"a""b" x`, 0, 6, skippedQuoted, ""},
		{"backtick identifier", "`a\\` x", 0, 4, skippedQuoted, ""},
		{"minus", "a - b", 2, 2, skippedNothing, ""},
		{"minus at the end", "a -", 2, 2, skippedNothing, ""},
		{"division", "a / b", 2, 2, skippedNothing, ""},
		{"unclosed literal", "x = 'a", 4, 0, skippedNothing, "string literal starting with ' is never closed"},
		{"unclosed identifier", "x = `a", 4, 0, skippedNothing, "quoted identifier starting with ` is never closed"},
		{"unclosed block comment", "x /* a *", 2, 0, skippedNothing, "block comment /* is never closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pos := positioner{src: tt.src}
			end, what, err := skipNonCode(tt.src, tt.i, &pos)
			if tt.err != "" {
				var se *SyntaxError
				require.ErrorAs(t, err, &se)
				assert.Equal(t, tt.err, se.Msg)
				assert.Equal(t, tt.i, se.Offset)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.end, end)
			assert.Equal(t, tt.what, what)
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
			assert.Equal(t, [2]int{wl, wc}, [2]int{line, col}, "%q at %d forwards", src, off)
		}
		for k := len(offs) - 1; k >= 0; k-- {
			off := offs[k]
			line, col := pos.at(off)
			wl, wc := recount(src, off)
			assert.Equal(t, [2]int{wl, wc}, [2]int{line, col}, "%q at %d backwards", src, off)
		}
	}
}
