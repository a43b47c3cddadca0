package variable

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// DateForms names the forms of the date grammar in one line, for messages
// that ask for a date.
const DateForms = "YYYY-MM-DD, YYYY-MM-DD HH:MM:SS, an RFC 3339 date-time, or a relative date such as -7d, -2w, -1m, -1y, -24h, mStart or -1mStart"

// The Expected texts of a *DateError, by where the text stopped fitting.
const (
	absoluteForms = "YYYY-MM-DD, optionally followed by T or a space, HH:MM, then optionally :SS, a fraction .F (1 to 9 digits) and a zone Z or ±HH:MM"
	relativeForms = "- then a whole number and h, d, w, m or y (-24h, -7d, -2w, -1m, -1y), optionally followed by Start or End after d, w, m or y (-1mStart); " +
		"or dStart, wStart, mStart, yStart, dEnd, wEnd, mEnd, yEnd"
	inRange = "a date from 0001-01-01 to 9999-12-31 in UTC"
)

// maxRelative bounds N in "-Nd" so that the arithmetic cannot overflow.
// Even in hours it reaches more than 11,000 years back, so every N it
// refuses would land before the year 0001 anyway.
const (
	maxRelative       = 99_999_999
	maxRelativeDigits = 8
)

// maxErrorInput bounds DateError.Input, so that an error never carries a
// client's megabyte back into logs and responses.
const maxErrorInput = 200

// DateError reports text that is not a date of the grammar ParseDateExpr
// reads, or a date that resolves outside the years 0001 to 9999 in UTC.
type DateError struct {
	// Input is the text given, cut to at most 200 bytes at a character
	// boundary.
	Input string
	// Truncated is true when Input is only the start of the text.
	Truncated bool
	// Problem says what is wrong, as a phrase that follows "is": "empty",
	// "not a date", "not a relative date", "not a real calendar date",
	// "not a real time of day", "not a real zone offset", "too far in the
	// past", "outside the years 0001 to 9999 (in UTC)".
	Problem string
	// Expected says what would have been read there, as a noun phrase, such
	// as "a day from 01 to 28 (2025-02 has 28 days)" or DateForms.
	Expected string
}

// Error returns a message such as
// `"2025-02-30" is not a real calendar date; want a day from 01 to 28 (2025-02 has 28 days)`.
func (e *DateError) Error() string {
	in := strconv.Quote(e.Input)
	if e.Truncated {
		in += "…"
	}
	return in + " is " + e.Problem + "; want " + e.Expected
}

// reason is the message without the input, for errors that show the input
// their own way.
func (e *DateError) reason() string { return e.Problem + "; want " + e.Expected }

func dateError(s, problem, expected string) *DateError {
	e := &DateError{Input: s, Problem: problem, Expected: expected}
	if len(s) > maxErrorInput {
		cut := maxErrorInput
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		e.Input, e.Truncated = s[:cut], true
	}
	return e
}

// anchor is the Start or End suffix of a relative date.
type anchor uint8

const (
	anchorNone anchor = iota
	anchorStart
	anchorEnd
)

// DateExpr is a date of the grammar shared by Date variables and insight
// date ranges, read but not yet resolved: a relative date such as "-7d"
// names a different day on each run. ParseDateExpr makes one; Resolve turns
// it into a Timestamp against a clock. The zero DateExpr is not valid.
type DateExpr struct {
	text     string
	abs      Timestamp // when not relative
	relative bool
	n        int  // units back
	unit     byte // h, d, w, m or y
	anchor   anchor
}

// ParseDate reads s as ParseDateExpr does and resolves it against now, as
// DateExpr.Resolve does. It is what a Date variable's Coerce does with text.
// Every error is a *DateError.
func ParseDate(s string, now time.Time) (Timestamp, error) {
	ts, err := parseDate(s, now)
	if err != nil {
		return Timestamp{}, err
	}
	return ts, nil
}

// parseDate is ParseDate with the concrete error type, which Coerce reads
// without a type assertion.
func parseDate(s string, now time.Time) (Timestamp, *DateError) {
	e, err := parseDateExpr(s)
	if err != nil {
		return Timestamp{}, err
	}
	return e.resolve(now)
}

// ParseDateExpr reads s in the date grammar that Date variables and insight
// date ranges share, without a clock:
//
//   - "YYYY-MM-DD": a whole day. It must exist in the calendar (2025-02-30
//     does not).
//   - "YYYY-MM-DD HH:MM:SS" or "YYYY-MM-DDTHH:MM:SS": an instant in UTC. The
//     seconds may be left out and may carry a fraction of 1 to 9 digits
//     (".25"); a zone "Z" or "±HH:MM" after the time (RFC 3339) converts it
//     to UTC. Hour 24 and leap seconds are refused.
//   - "-N" and a unit h, d, w, m or y: N hours, days, weeks, months or years
//     back from now (see Resolve). N is a whole number with no sign of its
//     own ("-0d" is today; "-007d" is "-7d").
//   - a relative date in d, w, m or y followed by "Start" or "End": the
//     first or last day of that day, week (Monday to Sunday), month or year
//     ("-1mStart" is the first of last month). Without "-N" ("mStart") it
//     is the current one.
//
// Nothing else is read: no surrounding spaces, no lower-case "t" or "z", no
// comma before a fraction, no "+7d", no "today". An absolute date outside the years 0001 to 9999 in
// UTC is refused here; a relative one can only be checked by Resolve. Every
// error is a *DateError.
func ParseDateExpr(s string) (DateExpr, error) {
	e, err := parseDateExpr(s)
	if err != nil {
		return DateExpr{}, err
	}
	return e, nil
}

func parseDateExpr(s string) (DateExpr, *DateError) {
	switch {
	case s == "":
		return DateExpr{}, dateError(s, "empty", DateForms)
	case looksAbsolute(s):
		return parseAbsolute(s)
	case looksRelative(s):
		return parseRelative(s)
	}
	return DateExpr{}, dateError(s, "not a date", DateForms)
}

// looksAbsolute reports the start "NNNN-", so that an absolute date that is
// wrong later on is told what an absolute date looks like.
func looksAbsolute(s string) bool {
	return len(s) >= 5 && s[4] == '-' && allDigits(s[:4])
}

// looksRelative reports a leading "-" or a bare "mStart", so that "-7q" is
// told what a relative date looks like and "yesterday" what a date does.
func looksRelative(s string) bool {
	return s[0] == '-' || len(s) > 1 && isUnit(s[0]) && (s[1:] == "Start" || s[1:] == "End")
}

func isUnit(c byte) bool {
	return c == 'h' || c == 'd' || c == 'w' || c == 'm' || c == 'y'
}

// String returns the text the expression was read from.
func (e DateExpr) String() string { return e.text }

// Relative reports whether e depends on the clock given to Resolve.
func (e DateExpr) Relative() bool { return e.relative }

// Precision is how much time e names from the instant Resolve gives: 24
// hours for a whole day (a calendar date, or a relative date in d, w, m or
// y, with or without Start or End), an hour for "-Nh", and 0 for a
// date-time, which names an instant. An upper bound that includes what its
// date names ends Precision after it.
func (e DateExpr) Precision() time.Duration {
	switch {
	case e.relative && e.unit == 'h':
		return time.Hour
	case e.relative || e.abs.DateOnly:
		return 24 * time.Hour
	}
	return 0
}

// Resolve returns the Timestamp e names when the clock reads now. An
// absolute date ignores now. A relative one counts back from now in UTC:
//
//   - "-Nh" gives now truncated to the hour, minus N hours (not DateOnly).
//   - "-Nd" and "-Nw" give the start of now's UTC day minus N or 7N days.
//   - "-Nm" and "-Ny" give the same day N months or N years earlier; a day
//     the target month lacks becomes its last day (-1m on 2025-03-31 gives
//     2025-02-28, -1y on 2024-02-29 gives 2023-02-28).
//   - Start and End then move to the first or last day of that week
//     (Monday to Sunday), month or year; for d they change nothing.
//
// Every relative date but "-Nh" gives a DateOnly Timestamp at midnight. A
// result outside the years 0001 to 9999 in UTC is a *DateError.
func (e DateExpr) Resolve(now time.Time) (Timestamp, error) {
	ts, err := e.resolve(now)
	if err != nil {
		return Timestamp{}, err
	}
	return ts, nil
}

func (e DateExpr) resolve(now time.Time) (Timestamp, *DateError) {
	if !e.relative {
		if e.text == "" {
			return Timestamp{}, dateError("", "empty", DateForms)
		}
		return e.abs, nil
	}
	t := e.back(now.UTC())
	if y := t.Year(); y < 1 || y > 9999 {
		return Timestamp{}, dateError(e.text, "outside the years 0001 to 9999 (in UTC)", inRange)
	}
	return Timestamp{Time: t, DateOnly: e.unit != 'h'}, nil
}

// back counts a relative date back from now, which is in UTC.
func (e DateExpr) back(now time.Time) time.Time {
	if e.unit == 'h' {
		// Whole days first: N hours as one Duration would overflow.
		return now.Truncate(time.Hour).AddDate(0, 0, -(e.n / 24)).Add(-time.Duration(e.n%24) * time.Hour)
	}
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	switch e.unit {
	case 'd':
		return day.AddDate(0, 0, -e.n)
	case 'w':
		t := day.AddDate(0, 0, -7*e.n)
		monday := t.AddDate(0, 0, -((int(t.Weekday()) + 6) % 7))
		return e.pick(t, monday, monday.AddDate(0, 0, 6))
	case 'm':
		t := addMonthsClamped(day, -e.n)
		first := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		return e.pick(t, first, first.AddDate(0, 0, daysIn(t.Year(), t.Month())-1))
	default: // 'y'
		t := addMonthsClamped(day, -12*e.n)
		return e.pick(t, time.Date(t.Year(), 1, 1, 0, 0, 0, 0, time.UTC), time.Date(t.Year(), 12, 31, 0, 0, 0, 0, time.UTC))
	}
}

// pick returns day, or the first or last day of its period as e's anchor
// says.
func (e DateExpr) pick(day, first, last time.Time) time.Time {
	switch e.anchor {
	case anchorStart:
		return first
	case anchorEnd:
		return last
	}
	return day
}

// parseRelative reads "-N<unit>", "-N<unit>Start|End" and "<unit>Start|End".
func parseRelative(s string) (DateExpr, *DateError) {
	e := DateExpr{text: s, relative: true}
	i := 0
	minus := s[0] == '-'
	if minus {
		i = 1
	}
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	digits := s[i:j]
	// N comes with its minus sign: "-7d" and "mStart", never "7d" or "-d".
	if minus != (digits != "") || j == len(s) || !isUnit(s[j]) {
		return e, dateError(s, "not a relative date", relativeForms)
	}
	e.unit = s[j]
	switch s[j+1:] {
	case "":
		if !minus {
			return e, dateError(s, "not a relative date", relativeForms)
		}
	case "Start":
		e.anchor = anchorStart
	case "End":
		e.anchor = anchorEnd
	default:
		return e, dateError(s, "not a relative date", relativeForms)
	}
	if e.unit == 'h' && e.anchor != anchorNone {
		return e, dateError(s, "not a relative date", "Start or End after d, w, m or y only (-Nh already starts at an hour)")
	}
	digits = strings.TrimLeft(digits, "0")
	if len(digits) > maxRelativeDigits {
		return e, dateError(s, "too far in the past", "at most "+strconv.Itoa(maxRelative)+" units back")
	}
	e.n, _ = strconv.Atoi(digits) // "" (all zeros) is 0
	return e, nil
}

// scanner reads fixed-width fields; once a field does not fit, ok stays
// false and every later read is a no-op.
type scanner struct {
	s  string
	i  int
	ok bool
}

// num reads exactly width digits.
func (p *scanner) num(width int) int {
	if !p.ok || p.i+width > len(p.s) || !allDigits(p.s[p.i:p.i+width]) {
		p.ok = false
		return 0
	}
	n, _ := strconv.Atoi(p.s[p.i : p.i+width])
	p.i += width
	return n
}

// lit reads the byte c.
func (p *scanner) lit(c byte) {
	if !p.peek(c) {
		p.ok = false
		return
	}
	p.i++
}

// peek reports whether c comes next.
func (p *scanner) peek(c byte) bool { return p.ok && p.i < len(p.s) && p.s[p.i] == c }

// fraction reads 1 to 9 digits after a decimal point as nanoseconds.
func (p *scanner) fraction() int {
	start := p.i
	for p.i < len(p.s) && isDigit(p.s[p.i]) {
		p.i++
	}
	k := p.i - start
	if k == 0 || k > 9 {
		p.ok = false
		return 0
	}
	ns, _ := strconv.Atoi(p.s[start:p.i])
	for ; k < 9; k++ {
		ns *= 10
	}
	return ns
}

// clock is the time of day of a date-time, and its zone offset.
type clock struct {
	hour, min, sec, nsec int
	offset               int // seconds east of UTC
	offHour, offMin      int
}

// parseAbsolute reads a calendar date and an optional time and zone.
func parseAbsolute(s string) (DateExpr, *DateError) {
	p := scanner{s: s, ok: true}
	y := p.num(4)
	p.lit('-')
	mo := p.num(2)
	p.lit('-')
	d := p.num(2)
	dateOnly := p.ok && p.i == len(s)
	var c clock
	if !dateOnly {
		c = parseClock(&p)
	}
	if !p.ok || p.i != len(s) {
		return DateExpr{}, dateError(s, "not a date", absoluteForms)
	}
	if err := checkFields(s, y, mo, d, c); err != nil {
		return DateExpr{}, err
	}
	t := time.Date(y, time.Month(mo), d, c.hour, c.min, c.sec, c.nsec, time.UTC).Add(-time.Duration(c.offset) * time.Second)
	if t.Year() < 1 || t.Year() > 9999 {
		return DateExpr{}, dateError(s, "outside the years 0001 to 9999 (in UTC)", inRange)
	}
	return DateExpr{text: s, abs: Timestamp{Time: t, DateOnly: dateOnly}}, nil
}

// parseClock reads what follows the date: "T" or " ", HH:MM[:SS[.F]], and
// an optional zone.
func parseClock(p *scanner) clock {
	var c clock
	if !p.peek('T') {
		p.lit(' ')
	} else {
		p.i++
	}
	c.hour = p.num(2)
	p.lit(':')
	c.min = p.num(2)
	if p.peek(':') {
		p.i++
		c.sec = p.num(2)
		if p.peek('.') {
			p.i++
			c.nsec = p.fraction()
		}
	}
	switch {
	case p.peek('Z'):
		p.i++
	case p.peek('+'), p.peek('-'):
		sign := 1
		if p.s[p.i] == '-' {
			sign = -1
		}
		p.i++
		c.offHour = p.num(2)
		p.lit(':')
		c.offMin = p.num(2)
		c.offset = sign * (c.offHour*3600 + c.offMin*60)
	}
	return c
}

// checkFields refuses fields outside their range, naming the range.
func checkFields(s string, y, mo, d int, c clock) *DateError {
	switch {
	case mo < 1 || mo > 12:
		return dateError(s, "not a real calendar date", "a month from 01 to 12")
	case d < 1 || d > daysIn(y, time.Month(mo)):
		n := daysIn(y, time.Month(mo))
		return dateError(s, "not a real calendar date",
			"a day from 01 to "+strconv.Itoa(n)+" ("+s[:7]+" has "+strconv.Itoa(n)+" days)")
	case c.hour > 23:
		return dateError(s, "not a real time of day", "an hour from 00 to 23")
	case c.min > 59:
		return dateError(s, "not a real time of day", "minutes from 00 to 59")
	case c.sec > 59:
		return dateError(s, "not a real time of day", "seconds from 00 to 59")
	case c.offHour > 23 || c.offMin > 59:
		return dateError(s, "not a real zone offset", "a zone offset from -23:59 to +23:59")
	}
	return nil
}

// toDate coerces a Date variable's value.
func toDate(val any, now time.Time) (any, string) {
	switch x := val.(type) {
	case string:
		ts, err := parseDate(x, now)
		if err != nil {
			return nil, err.reason()
		}
		return ts, ""
	case time.Time:
		return inYears(Timestamp{Time: x.Round(0).UTC()})
	case Timestamp:
		return inYears(Timestamp{Time: x.Time.Round(0).UTC(), DateOnly: x.DateOnly})
	case []string, []any:
		return nil, "an array is not a single value"
	}
	return nil, "not text; want " + DateForms
}

// inYears refuses a Go time that text could not give: every engine reads
// years 0001 to 9999, and the text form of a Timestamp has room for four
// digits.
func inYears(ts Timestamp) (any, string) {
	if y := ts.Time.Year(); y < 1 || y > 9999 {
		return nil, "outside the years 0001 to 9999 (in UTC); want " + inRange
	}
	return ts, ""
}

// addMonthsClamped moves a midnight UTC time by whole months, landing on the
// last day of the target month when the day does not exist there; AddDate
// would roll March 31 minus one month over into March.
func addMonthsClamped(t time.Time, months int) time.Time {
	y, m, d := t.Date()
	total := y*12 + int(m) - 1 + months
	ny := total / 12
	if total%12 < 0 {
		ny--
	}
	nm := time.Month(total - ny*12 + 1)
	if last := daysIn(ny, nm); d > last {
		d = last
	}
	return time.Date(ny, nm, d, 0, 0, 0, 0, time.UTC)
}

func daysIn(year int, m time.Month) int {
	return time.Date(year, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
