package endpoint

// checkName enforces the name rule: it appears in URL paths, so it is kept
// to ASCII letters, digits, '-' and '_', starting with a letter, at most 128
// characters (^[a-zA-Z][a-zA-Z0-9_-]{0,127}$).
func checkName(name string) *Error {
	if name == "" {
		return required("name")
	}
	if !validName(name) {
		return invalidf(CodeInvalidInput, "name", "Invalid name '%s'. Must start with a letter, contain only alphanumeric characters, hyphens, or underscores, and be between 1 and 128 characters long.", name)
	}
	return nil
}

// validName reports whether name matches ^[a-zA-Z][a-zA-Z0-9_-]{0,127}$.
func validName(name string) bool {
	if len(name) == 0 || len(name) > 128 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}
