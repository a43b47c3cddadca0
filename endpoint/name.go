package endpoint

import "github.com/endpointkit/endpointkit/internal/apierror"

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
func validName(name string) bool { return apierror.ValidName(name) }
