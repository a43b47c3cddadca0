package sqltoken_test

import (
	"fmt"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/sqltoken"
)

func ExampleTokens() {
	const src = `SELECT 'C:\' || 'x' # c`
	for _, e := range []engine.Engine{engine.SQLite, engine.MySQL} {
		fmt.Println(e.Name())
		for _, t := range sqltoken.Tokens(e.Lexical(), src) {
			fmt.Printf("  %-11s %-12q ambiguous: %v\n", t.Kind, t.Text(src), t.Why)
		}
	}
	// Output:
	// sqlite
	//   word        "SELECT"     ambiguous: none
	//   string      "'C:\\'"     ambiguous: backslash
	//   punctuation "|"          ambiguous: none
	//   punctuation "|"          ambiguous: none
	//   string      "'x'"        ambiguous: none
	//   punctuation "#"          ambiguous: hash
	//   word        "c"          ambiguous: none
	// mysql
	//   word        "SELECT"     ambiguous: none
	//   string      "'C:\\' || '" ambiguous: backslash
	//   word        "x"          ambiguous: none
	//   string      "' # c"      ambiguous: none
}
