package variable

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// maxDescribe bounds how much of a received value an error message repeats:
// a rejected value may be a megabyte of attacker-chosen text.
const maxDescribe = 80

// describe renders a received value for an error message, as JSON where it
// has a JSON form, so that a user recognises what they sent.
func describe(raw any) string {
	var s string
	switch x := raw.(type) {
	case nil:
		return "null"
	case string:
		return truncate(strconv.Quote(x))
	case json.RawMessage:
		s = string(bytes.TrimSpace(x))
		if !utf8.ValidString(s) {
			s = strconv.Quote(s)
		}
	case []byte:
		s = strconv.Quote(string(x))
	case time.Time:
		s = x.Format(time.RFC3339Nano)
	case Timestamp:
		s = x.String()
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			s = strconv.FormatFloat(x, 'g', -1, 64)
		} else {
			s = floatText(x)
		}
	case float32:
		s = strconv.FormatFloat(float64(x), 'g', -1, 32)
	default:
		b, err := json.Marshal(raw)
		if err != nil {
			s = fmt.Sprintf("%v", raw)
		} else {
			s = string(b)
		}
	}
	return truncate(s)
}

func truncate(s string) string {
	if len(s) <= maxDescribe {
		return s
	}
	cut := maxDescribe
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }
