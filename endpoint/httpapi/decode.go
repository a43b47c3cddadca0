package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/endpointkit/endpointkit/endpoint"
)

// decode reads r's body, a JSON object, into dst (a pointer to a struct).
// Top-level keys must be json names of dst's fields, so that a misspelt
// option fails loudly instead of being ignored; invalid UTF-8 and repeated
// keys are refused (checkJSON) rather than repaired or merged. Numbers decode as
// json.Number, keeping every digit for the variable coercion to judge. An
// empty body leaves dst as it is when emptyOK, for run requests of
// endpoints without variables.
func (h *handler) decode(w http.ResponseWriter, r *http.Request, dst any, emptyOK bool) error {
	ct := r.Header.Get("Content-Type")
	if ct != "" {
		if err := checkContentType(ct); err != nil {
			return err
		}
	}
	if r.ContentLength > h.cfg.maxBody {
		return errTooLarge(h.cfg.maxBody)
	}
	body, err := readBody(w, r, h.cfg.maxBody)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return errTooLarge(h.cfg.maxBody)
		}
		return &endpoint.Error{
			Status: http.StatusBadRequest,
			Code:   CodeParseError,
			Detail: "Could not read the request body.",
			Err:    endpoint.ErrInvalid,
		}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if emptyOK {
			return nil
		}
		return parseError("Request body is empty: expected a JSON object.")
	}
	if ct == "" {
		return errMediaType("Missing Content-Type: send 'Content-Type: application/json'.")
	}
	if rw, ok := w.(*responseWriter); ok {
		rw.body = body // for guardDetail
	}
	return decodeJSON(body, dst)
}

// readBody reads r's body, at most max bytes (an *http.MaxBytesError
// past them). A body of a declared length is read into a buffer of that
// length rather than grown from io.ReadAll's 512 bytes, and without
// http.MaxBytesReader's allocation: its declared length is within max,
// and only what follows it, in a body longer than declared (which
// net/http's own bodies never are), is read under the rest of the limit.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	n := r.ContentLength
	if n <= 0 || n > max {
		return io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	}
	buf := make([]byte, n+1) // one byte more, to see a body longer than declared
	m, err := io.ReadFull(r.Body, buf)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return buf[:m], nil
	case err != nil:
		return nil, err
	case n+1 > max:
		return nil, &http.MaxBytesError{Limit: max}
	}
	rest, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max-(n+1)))
	return append(buf, rest...), err
}

// decodeJSON is decode after the transport checks: body is a whole,
// non-empty request body.
func decodeJSON(body []byte, dst any) error {
	if err := checkJSON(body); err != nil {
		return err
	}
	if rb, ok := dst.(*runBody); ok && decodeRunBody(body, rb) {
		return nil
	}
	return decodeGeneral(body, dst)
}

// decodeGeneral is decodeJSON's path for any body and any dst, after
// checkJSON.
func decodeGeneral(body []byte, dst any) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syntax):
			return parseError(fmt.Sprintf("Malformed JSON at byte %d: %s.", syntax.Offset, clip(strings.TrimPrefix(syntax.Error(), "json: "), maxEchoed)))
		case errors.As(err, &typ):
			return parseError(fmt.Sprintf("Request body must be a JSON object, got %s.", jsonKind(typ.Value)))
		}
		return parseError("Malformed JSON: " + clip(err.Error(), maxEchoed) + ".")
	}
	if top == nil {
		return parseError("Request body must be a JSON object, got null.")
	}
	if unknown := unknownKeys(top, reflect.TypeOf(dst).Elem()); len(unknown) > 0 {
		return &endpoint.Error{
			Status: http.StatusBadRequest,
			Code:   endpoint.CodeInvalidInput,
			Detail: "Unknown field(s): " + clipList(unknown),
			Attr:   clip(unknown[0], maxEchoRunes),
			Err:    endpoint.ErrInvalid,
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		return fieldError(err)
	}
	return nil
}

// fieldError explains an error of decoding a well-formed object into its
// struct: a value of the wrong type, or one a field's own UnmarshalJSON
// refused. Either way the client sent it, so it is a 400.
func fieldError(err error) error {
	var e *endpoint.Error
	if errors.As(err, &e) {
		return e
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		field := clipPath(typ.Field)
		if field == "" {
			field = "(body)"
		}
		return &endpoint.Error{
			Status: http.StatusBadRequest,
			Code:   endpoint.CodeInvalidInput,
			Detail: fmt.Sprintf("Invalid type for '%s': expected %s, got %s.", field, goKind(typ.Type), jsonKind(typ.Value)),
			Attr:   clipPath(typ.Field),
			Err:    endpoint.ErrInvalid,
		}
	}
	return &endpoint.Error{
		Status: http.StatusBadRequest,
		Code:   endpoint.CodeInvalidInput,
		Detail: "Invalid request body: " + clip(strings.TrimPrefix(err.Error(), "json: "), maxEchoed) + ".",
		Err:    endpoint.ErrInvalid,
	}
}

// jsonKind names the JSON value encoding/json describes as v ("bool",
// "number 1.5", ...) in the words of JSON. The number is the client's
// literal, so it is cut.
func jsonKind(v string) string {
	switch {
	case v == "bool":
		return "boolean"
	case v == "":
		return "a value"
	}
	return clip(v, maxEchoRunes)
}

// goKind names the JSON type that decodes into t.
func goKind(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	}
	return "another type"
}

// fieldNames caches, per struct type, the json names of its fields.
var fieldNames sync.Map // reflect.Type -> map[string]bool

// unknownKeys returns the keys of top that are no json name of a field of
// t, sorted. The match is exact: encoding/json's case-insensitive matching
// would let "Limit" through, which no documented client sends.
func unknownKeys(top map[string]json.RawMessage, t reflect.Type) []string {
	names, ok := fieldNames.Load(t)
	if !ok {
		names, _ = fieldNames.LoadOrStore(t, jsonNames(t))
	}
	known := names.(map[string]bool)
	var unknown []string
	for k := range top {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	return unknown
}

// jsonNames lists the json names of t's exported fields, those of embedded
// structs included, as encoding/json sees them.
func jsonNames(t reflect.Type) map[string]bool {
	names := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for n := range jsonNames(ft) {
					names[n] = true
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names[name] = true
	}
	return names
}

// checkContentType accepts application/json and the +json types, in UTF-8
// (the only encoding JSON may be exchanged in, RFC 8259).
func checkContentType(ct string) error {
	if ct == "application/json" {
		return nil
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return errMediaType(fmt.Sprintf("Unsupported media type %q: send 'Content-Type: application/json'.", clip(ct, maxEchoRunes)))
	}
	if mt != "application/json" && !(strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
		return errMediaType(fmt.Sprintf("Unsupported media type %q: send 'Content-Type: application/json'.", clip(mt, maxEchoRunes)))
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return errMediaType(fmt.Sprintf("Unsupported charset %q: JSON must be UTF-8.", clip(cs, maxEchoRunes)))
	}
	return nil
}

func parseError(detail string) error {
	return &endpoint.Error{Status: http.StatusBadRequest, Code: CodeParseError, Detail: detail, Err: endpoint.ErrInvalid}
}

func errMediaType(detail string) error {
	return &endpoint.Error{Status: http.StatusUnsupportedMediaType, Code: CodeUnsupportedMediaType, Detail: detail, Err: endpoint.ErrInvalid}
}

func errTooLarge(limit int64) error {
	return &endpoint.Error{
		Status: http.StatusRequestEntityTooLarge,
		Code:   CodeRequestTooLarge,
		Detail: fmt.Sprintf("Request body too large: the limit is %d bytes.", limit),
		Err:    endpoint.ErrInvalid,
	}
}
