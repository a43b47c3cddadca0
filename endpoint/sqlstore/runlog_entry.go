package sqlstore

import "encoding/json"

// appendJSONString appends s as a JSON string. Printable ASCII without
// quote or backslash (ids, codes, modes) is copied; anything else goes
// through encoding/json, which also turns invalid UTF-8 into U+FFFD as the
// stored form always did.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
