// Package placeholder finds the {variables.<code_name>} placeholders of a
// saved SQL query and renders the query for one SQL engine with bind
// markers in their place, so that run-time values travel as bound arguments
// and never become part of the SQL text.
//
// A template is compiled once, when an endpoint is saved, and rendered many
// times, once per run:
//
//	t, err := placeholder.Compile("SELECT count() FROM events WHERE event = {variables.event}")
//	query, args, err := t.Render(engine.PostgreSQL, map[string]any{"event": "signed_up"})
//	// query: SELECT count() FROM events WHERE event = $1, args: ["signed_up"]
//
// # What counts as a placeholder
//
// The scanner reads SQL outside string literals ('...', with doubled quotes
// and backslash escapes), quoted identifiers ("..." and `...`, with doubled
// quotes) and comments (-- to the end of the line, and /* */, not nested).
// There, a '{' starts a placeholder when, after optional whitespace, it is
// followed by the word "variables" (exactly, lower case) and, after optional
// whitespace, a '.'. Any other '{' is left alone as ordinary text, so JSON
// text and ClickHouse's own {name:Type} parameters pass through untouched;
// "{variables}" and "{variables:String}" are not placeholders either.
//
// Once a placeholder has started, the rest must be optional whitespace, a
// code name matching [A-Za-z_][A-Za-z0-9_]*, optional whitespace and '}'.
// Anything else is a *SyntaxError that gives line and column:
//
//	{variables.}       missing code name
//	{ variables.1a }   code name starting with a digit
//	{variables.a b}    text after the code name
//	{variables.a-b}    a character that cannot be part of a code name
//	{variables.a       end of input before '}'
//
// A string literal, quoted identifier or block comment left open is a
// *SyntaxError too, reported at its opening character.
//
// The scanner reads SQL with the library's tokenizer (sql/sqltoken)
// as one engine does when it is told which (ScanFor, CompileFor, with the
// engine's Lexical): on SQLite a backslash is an ordinary character, so
// 'C:\' is a whole literal; on MySQL '#' starts a comment and "..." is a
// string; on PostgreSQL E'...' honours backslashes, $$...$$ is a literal
// and block comments nest. A placeholder-like text inside a literal or
// comment is not a placeholder; Template.Inert lists it. Scan and Compile,
// which are not told the engine, read as described above: backslash
// escapes are honoured in '...' literals on every engine, so a SQLite or
// PostgreSQL literal ending in a backslash ('C:\') reads as left open and
// is reported rather than silently misread, and dollar quotes, nested
// block comments and MySQL's '#' comments are not understood.
//
// # Lists
//
// A placeholder is in list position (Placeholder.InList) when it directly
// follows the keyword IN, comments and whitespace aside ("x IN
// {variables.l}"), or when it is the only element between the parentheses
// of an IN ("x IN ({variables.l})"). A multi-valued List ([]string) renders
// only there: as "(?, ?, ?)" after IN and as "?, ?, ?" inside the
// parentheses, one argument per element. Template.CheckLists rejects a
// multi-valued variable anywhere else when the endpoint is defined. A
// single value in list position renders as "(?)" after IN, so that the
// SQL stays valid whichever kind of variable is used.
//
// # Rendering
//
// Each engine decides its bind markers and how values become driver
// arguments (see package sql/engine). A marker that would touch a word
// character of the surrounding text is set apart by a space, so that
// "{variables.a}0" never becomes "?0" (SQLite's parameter 0) or "$10"
// (another PostgreSQL parameter), nor "x{variables.a}" the identifier
// "x$1". Generated SQL (insights, materialization) is written with a
// Builder, which follows the same rules.
package placeholder
