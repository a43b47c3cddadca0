package placeholder

// Statement is what a template's text holds as SQL statements, read as
// Scan reads it (comments, string literals and quoted identifiers are not
// code). It lets a caller that embeds the query in a larger one, such as
// a paging subquery, cut it where its code ends and refuse a second
// statement, without reading the text a second way.
type Statement struct {
	// Body is the source up to the end of its last token that is not a
	// ';'. Trailing semicolons, whitespace and comments are left out: a
	// subquery cannot hold them. When there is a second statement it is
	// part of Body.
	Body string
	// Second is the byte offset of the first ';' when more code follows
	// it, the start of a second statement; it is -1 when the text holds
	// one statement. Line and Column locate that ';' (1-based, Column
	// counting runes as Placeholder.Column does); both are 0 when Second
	// is -1.
	Second       int
	Line, Column int
}

// Statement returns how the template's text divides into statements. It
// was worked out when the template was compiled, in the same walk that
// found the placeholders.
func (t *Template) Statement() Statement { return t.stmt }
