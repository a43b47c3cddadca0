package httpapi

import (
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/internal/jsontext"
)

// FuzzFormatText: what a client sends (Accept) and what a query returns
// (names, strings) never break the answer: Accept always picks a served
// format, a header holds a JSON array of the names in printable ASCII, a
// string in NDJSON decodes to itself as encoding/json writes it, and a
// CSV field reads back as itself; guarded (csvLines with guard), a
// string and a column name read back as themselves or, when they begin as
// a formula, with a leading ', and never begin as one.
func FuzzFormatText(f *testing.F) {
	for _, s := range []string{"text/csv", "text/csv;q=0.5, application/x-ndjson", "*/*;q=0", "a, b", `say "hi"`, "two\nlines", " lead", `\.`, "\xff\xfe", "\u2028", "🙂", "", "=1+2", "@SUM(1)", "\t=1", "\r=1", "-", "+1", `"=x"`} {
		f.Add(s)
	}
	h := &handler{cfg: config{}}
	f.Fuzz(func(t *testing.T, s string) {
		switch h.formatAccepted([]string{s}).(type) {
		case nil, csvFormat, ndjsonFormat:
		default:
			t.Fatalf("Accept %q: a format not served", s)
		}
		hdr := headerJSON([]string{s, "x"})
		for i := 0; i < len(hdr); i++ {
			require.GreaterOrEqual(t, hdr[i], byte(0x20), "header %q: byte", hdr)
			require.Less(t, hdr[i], byte(0x7f), "header %q: byte", hdr)
		}
		want := string([]rune(s)) // each invalid byte a U+FFFD, as encoding/json writes it
		var got []string
		if err := json.Unmarshal([]byte(hdr), &got); err != nil || len(got) != 2 || got[0] != want {
			t.Fatalf("header %q decodes to %q (%v), want %q", hdr, got, err, want)
		}
		var back string
		if err := json.Unmarshal(jsontext.AppendString(nil, s), &back); err != nil || back != want {
			t.Fatalf("JSON string of %q decodes to %q (%v)", s, back, err)
		}
		ref, _ := encodeJSON(s)
		if string(jsontext.AppendString(nil, s))+"\n" != string(ref) {
			t.Fatalf("JSON string of %q is %s, encoding/json writes %s", s, jsontext.AppendString(nil, s), ref)
		}
		if !utf8.ValidString(s) || strings.ContainsRune(s, '\r') {
			return // encoding/csv reads \r\n as \n, and invalid UTF-8 as is
		}
		line := appendCSVField(nil, s, true)
		line = append(line, ",x\n"...)
		rec, err := csv.NewReader(strings.NewReader(string(line))).Read()
		if err != nil || len(rec) != 2 || rec[0] != s {
			t.Fatalf("CSV field of %q reads %q (%v)", s, rec, err)
		}
		guarded := csvLines{guard: true}
		want = s
		if s != "" && formulaStart(s[0]) {
			want = "'" + s
		}
		row, err := guarded.row(nil, []any{s, "x"})
		require.NoError(t, err, "guarded row of %q", s)
		head := guarded.head(nil, &Table{Columns: []string{s, "x"}})
		for _, line := range [][]byte{row, head} {
			rec, err := csv.NewReader(strings.NewReader(string(line))).Read()
			if err != nil || len(rec) != 2 || rec[0] != want {
				t.Fatalf("guarded CSV of %q is %q, reads %q (%v), want %q", s, line, rec, err, want)
			}
			if rec[0] != "" && formulaStart(rec[0][0]) {
				t.Fatalf("guarded CSV of %q reads %q, a formula", s, rec[0])
			}
		}
	})
}
