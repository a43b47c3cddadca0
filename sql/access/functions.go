package access

import (
	"slices"
	"strings"
)

// The functions a query may call are an allowlist: a function the analyzer
// does not know is refused by name, because the engines have hundreds that
// read files, reach the network, read other tables by a name given as text
// or change the session, and a denylist would miss the next one. The list
// holds the common SQL and analytics functions of SQLite, PostgreSQL, MySQL
// and ClickHouse, and every function the library generates itself
// (insight's and materialize's SQL); Rules.Functions extends it.
//
// Names are compared without regard to ASCII case.

// The allowlist is kept per engine: each name below is a function of that
// engine (TestFunctionsExistOnTheirEngine calls every one on its engine:
// the SQLite build the library runs, modernc.org/sqlite; PostgreSQL;
// MariaDB; ClickHouse on chDB), so that nothing is listed that no engine
// has. A query may call a function of any of the lists: the analyzer does
// not know which engine runs it, and a function its engine lacks fails
// there as any unknown function does.

// sqliteFunctions are the allowed functions of SQLite.
var sqliteFunctions = []string{
	"abs", "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "avg", "cast", "ceil",
	"ceiling", "char", "coalesce", "concat", "concat_ws", "cos", "cosh", "count",
	"cume_dist", "date", "datetime", "degrees", "dense_rank", "exp", "first_value", "floor",
	"format", "glob", "group_concat", "hex", "if", "ifnull", "iif", "instr", "json",
	"json_array", "json_array_length", "json_extract", "json_group_array",
	"json_group_object", "json_insert", "json_object", "json_patch", "json_pretty",
	"json_quote", "json_remove", "json_replace", "json_set", "json_type", "json_valid",
	"jsonb", "jsonb_extract", "julianday", "lag", "last_value", "lead", "length", "like",
	"likely", "ln", "log", "log10", "log2", "lower", "ltrim", "match", "max", "min", "mod",
	"nth_value", "ntile", "nullif", "octet_length", "percent_rank", "pi", "pow", "power",
	"printf", "quote", "radians", "random", "rank", "replace", "round", "row_number",
	"rtrim", "sign", "sin", "sinh", "soundex", "sqrt", "strftime", "string_agg", "substr",
	"substring", "sum", "tan", "tanh", "time", "timediff", "total", "trim", "trunc",
	"typeof", "unhex", "unicode", "unixepoch", "unlikely", "upper",
}

// postgresFunctions are the allowed functions of PostgreSQL (with CAST,
// EXTRACT, POSITION, TRIM, COALESCE, GREATEST, LEAST, NULLIF, GROUPING,
// ANY and ARRAY, which its grammar reads as calls).
var postgresFunctions = []string{
	"abs", "acos", "acosh", "age", "any", "array", "array_agg", "array_length",
	"array_position", "array_to_string", "ascii", "asin", "asinh", "atan", "atan2", "atanh",
	"avg", "bit_and", "bit_length", "bit_or", "bit_xor", "bool_and", "bool_or", "btrim",
	"cardinality", "cast", "cbrt", "ceil", "ceiling", "char_length", "character_length",
	"chr", "clock_timestamp", "coalesce", "concat", "concat_ws", "convert", "corr", "cos",
	"cosh", "cot", "count", "covar_pop", "covar_samp", "cume_dist", "date", "date_bin",
	"date_part", "date_trunc", "degrees", "dense_rank", "div", "every", "exp", "extract",
	"first_value", "floor", "format", "gen_random_uuid", "greatest", "grouping", "initcap",
	"isfinite", "json", "json_agg", "json_array_length", "json_build_array",
	"json_build_object", "json_extract_path", "json_extract_path_text", "json_object",
	"json_object_agg", "json_strip_nulls", "json_typeof", "jsonb", "jsonb_agg",
	"jsonb_array_length", "jsonb_build_array", "jsonb_build_object", "jsonb_exists",
	"jsonb_extract_path", "jsonb_extract_path_text", "jsonb_object_agg", "jsonb_strip_nulls",
	"jsonb_typeof", "justify_days", "justify_hours", "justify_interval", "lag", "last_value",
	"lead", "least", "left", "length", "like", "ln", "log", "log10", "lower", "lpad",
	"ltrim", "make_date", "make_interval", "make_timestamp", "max", "md5", "min", "mod",
	"mode", "now", "nth_value", "ntile", "nullif", "octet_length", "path", "percent_rank",
	"percentile_cont", "percentile_disc", "pi", "position", "pow", "power", "radians",
	"random", "rank", "regexp_count", "regexp_instr", "regexp_like", "regexp_match",
	"regexp_matches", "regexp_replace", "regexp_substr", "regr_count", "regr_intercept",
	"regr_r2", "regr_slope", "repeat", "replace", "reverse", "right", "round", "row_number",
	"row_to_json", "rpad", "rtrim", "sha256", "sign", "sin", "sinh", "split_part", "sqrt",
	"starts_with", "statement_timestamp", "stddev", "stddev_pop", "stddev_samp",
	"string_agg", "string_to_array", "strpos", "substr", "substring", "sum", "tan", "tanh",
	"timezone", "to_char", "to_date", "to_hex", "to_json", "to_jsonb", "to_number",
	"to_timestamp", "transaction_timestamp", "translate", "trim", "trunc", "upper", "uuid",
	"var_pop", "var_samp", "variance", "width_bucket",
}

// mysqlFunctions are the allowed functions of MySQL and MariaDB (window
// functions, read with OVER, among them).
var mysqlFunctions = []string{
	"abs", "acos", "adddate", "ascii", "asin", "atan", "atan2", "avg", "bit_and",
	"bit_length", "bit_or", "bit_xor", "cast", "ceil", "ceiling", "char", "char_length",
	"character_length", "chr", "coalesce", "concat", "concat_ws", "convert", "convert_tz",
	"cos", "cot", "count", "crc32", "cume_dist", "curdate", "curtime", "date", "date_add",
	"date_format", "date_sub", "datediff", "day", "dayname", "dayofmonth", "dayofweek",
	"dayofyear", "degrees", "dense_rank", "exp", "extract", "first_value", "floor", "format",
	"from_days", "from_unixtime", "greatest", "group_concat", "hex", "hour", "if", "ifnull",
	"instr", "isnull", "json_array", "json_arrayagg", "json_contains", "json_contains_path",
	"json_depth", "json_extract", "json_insert", "json_keys", "json_length", "json_object",
	"json_objectagg", "json_pretty", "json_quote", "json_remove", "json_replace",
	"json_search", "json_set", "json_type", "json_unquote", "json_valid", "json_value",
	"lag", "last_day", "last_value", "lcase", "lead", "least", "left", "length", "ln",
	"locate", "log", "log10", "log2", "lower", "lpad", "ltrim", "makedate", "max", "md5",
	"median", "min", "minute", "mod", "month", "monthname", "now", "nth_value", "ntile",
	"nullif", "nvl", "octet_length", "percent_rank", "percentile_cont", "percentile_disc",
	"period_diff", "pi", "position", "pow", "power", "quarter", "quote", "radians", "rand",
	"rank", "regexp_instr", "regexp_replace", "regexp_substr", "repeat", "replace",
	"reverse", "right", "round", "row_number", "rpad", "rtrim", "sec_to_time", "second",
	"sha1", "sha2", "sign", "sin", "soundex", "space", "sqrt", "std", "stddev", "stddev_pop",
	"stddev_samp", "str_to_date", "subdate", "substr", "substring", "substring_index", "sum",
	"sysdate", "tan", "time", "time_format", "time_to_sec", "timediff", "timestampadd",
	"timestampdiff", "to_char", "to_days", "trim", "truncate", "ucase", "unhex",
	"unix_timestamp", "upper", "utc_date", "utc_time", "utc_timestamp", "uuid", "var_pop",
	"var_samp", "variance", "week", "weekday", "weekofyear", "year", "yearweek",
}

// clickhouseFunctions are the allowed functions of ClickHouse, in lower
// case (see clickhouseCombinators for countIf and friends).
var clickhouseFunctions = []string{
	"abs", "accuratecast", "accuratecastornull", "acos", "acosh", "adddate", "adddays",
	"addhours", "addminutes", "addmonths", "addseconds", "addweeks", "addyears", "age",
	"any", "any_value", "anyheavy", "anylast", "argmax", "argmin", "array", "array_agg",
	"array_to_string", "arrayall", "arrayavg", "arraycompact", "arrayconcat", "arraycount",
	"arraycumsum", "arraydistinct", "arrayelement", "arrayenumerate", "arrayexists",
	"arrayfilter", "arrayfirst", "arrayflatten", "arrayjoin", "arraymap", "arraymax",
	"arraymin", "arrayresize", "arrayreverse", "arrayreversesort", "arrayslice", "arraysort",
	"arraystringconcat", "arraysum", "arrayuniq", "arrayzip", "ascii", "asin", "asinh",
	"assumenotnull", "atan", "atan2", "atanh", "avg", "avgweighted", "bit_and", "bit_or",
	"bit_xor", "cardinality", "cast", "cbrt", "ceil", "ceiling", "char", "char_length",
	"character_length", "cityhash64", "coalesce", "columns", "concat", "concat_ws", "corr",
	"cos", "cosh", "count", "countequal", "covar_pop", "covar_samp", "covarpop", "covarsamp",
	"crc32", "cume_dist", "curdate", "cutquerystring", "cutwww", "date", "date_add",
	"date_bin", "date_diff", "date_format", "date_sub", "date_trunc", "dateadd", "datediff",
	"datesub", "datetrunc", "day", "dayofmonth", "dayofweek", "dayofyear", "degrees",
	"dense_rank", "domain", "domainwithoutwww", "empty", "emptyarraystring", "endswith",
	"entropy", "exp", "exponentialmovingaverage", "extract", "extractall",
	"extracturlparameter", "extracturlparameters", "farmhash64", "first_value", "floor",
	"format", "formatdatetime", "formatreadablequantity", "formatreadablesize", "fragment",
	"from_days", "from_unixtime", "fromunixtimestamp", "fromunixtimestamp64milli",
	"generateuuidv4", "greatest", "group_concat", "grouparray", "grouparraysorted",
	"groupbitand", "groupbitor", "groupbitxor", "grouping", "groupuniqarray", "has",
	"hasall", "hasany", "hex", "hour", "if", "ifnull", "indexof", "initcap", "instr",
	"intdiv", "intdivorzero", "isfinite", "isinfinite", "isnan", "isnotnull", "isnull",
	"isvalidjson", "json_array_length", "json_value", "jsonextract", "jsonextractarrayraw",
	"jsonextractbool", "jsonextractfloat", "jsonextractint", "jsonextractkeys",
	"jsonextractkeysandvalues", "jsonextractraw", "jsonextractstring", "jsonextractuint",
	"jsonhas", "jsonlength", "jsontype", "lag", "laginframe", "last_day", "last_value",
	"lcase", "lead", "leadinframe", "least", "left", "leftpad", "length", "lengthutf8",
	"like", "ln", "locate", "log", "log10", "log2", "lower", "lowerutf8", "lpad", "ltrim",
	"makedate", "map", "mapcontains", "mapkeys", "mapvalues", "match", "max", "maxmap",
	"md5", "median", "min", "minmap", "minute", "mod", "modulo", "month", "monthname",
	"multiif", "multisearchany", "murmurhash3_64", "negate", "notempty", "now", "nth_value",
	"ntile", "nullif", "octet_length", "parsedatetime", "parsedatetimebesteffort",
	"parsedatetimebesteffortornull", "parsedatetimebesteffortorzero", "parsedatetimeornull",
	"path", "pathfull", "percent_rank", "pi", "position", "positioncaseinsensitive",
	"positioncaseinsensitiveutf8", "positionutf8", "pow", "power", "printf", "protocol",
	"quantile", "quantiledeterministic", "quantileexact", "quantiles", "quantilesexact",
	"quantilestdigest", "quantiletdigest", "quantiletiming", "quarter", "querystring",
	"radians", "rand", "rand64", "randcanonical", "range", "rank", "regexp_instr",
	"regexp_matches", "regexp_replace", "reinterpretasstring", "repeat", "replace",
	"replaceall", "replaceone", "replaceregexpall", "replaceregexpone", "retention",
	"reverse", "right", "rightpad", "round", "roundbankers", "rounddown", "roundtoexp2",
	"row_number", "rpad", "rtrim", "second", "sequencecount", "sequencematch", "sha1",
	"sha256", "sign", "simplejsonextractbool", "simplejsonextractfloat",
	"simplejsonextractint", "simplejsonextractraw", "simplejsonextractstring",
	"simplejsonhas", "simplelinearregression", "sin", "sinh", "siphash64", "soundex",
	"space", "splitbychar", "splitbyregexp", "splitbystring", "sqrt", "startswith", "std",
	"stddev", "stddev_pop", "stddev_samp", "stddevpop", "stddevsamp", "str_to_date",
	"string_agg", "subdate", "substr", "substring", "substring_index", "substringutf8",
	"subtractdays", "subtracthours", "subtractminutes", "subtractmonths", "subtractseconds",
	"subtractweeks", "subtractyears", "sum", "sumkahan", "summap", "sumwithoverflow", "tan",
	"tanh", "timediff", "timeslot", "timestampadd", "timestampdiff", "timestampsub",
	"timezone", "to_days", "tobool", "todate", "todate32", "todateornull", "todatetime",
	"todatetime64", "todatetime64ornull", "todatetimeornull", "today", "todayofmonth",
	"todayofweek", "todayofyear", "todecimal128", "todecimal32", "todecimal64",
	"tofixedstring", "tofloat32", "tofloat64", "tofloat64ornull", "tofloat64orzero",
	"tohour", "toint16", "toint32", "toint32ornull", "toint64", "toint64ornull",
	"toint64orzero", "toint8", "tointervalday", "tointervalhour", "tointervalminute",
	"tointervalmonth", "tointervalsecond", "tointervalweek", "tointervalyear", "toisoweek",
	"toisoyear", "tojsonstring", "tominute", "tomonday", "tomonth", "tonullable", "topk",
	"topkweighted", "topleveldomain", "toquarter", "torelativedaynum", "torelativehournum",
	"tosecond", "tostartofday", "tostartoffifteenminutes", "tostartoffiveminutes",
	"tostartofhour", "tostartofinterval", "tostartofminute", "tostartofmonth",
	"tostartofquarter", "tostartofsecond", "tostartoftenminutes", "tostartofweek",
	"tostartofyear", "tostring", "totimezone", "touint16", "touint32", "touint64", "touint8",
	"tounixtimestamp", "tounixtimestamp64milli", "touuid", "toweek", "toyear", "toyearweek",
	"toyyyymm", "toyyyymmdd", "toyyyymmddhhmmss", "translate", "trim", "trimboth",
	"trimleft", "trimright", "trunc", "truncate", "tuple", "tupleelement", "ucase", "unhex",
	"uniq", "uniqcombined", "uniqcombined64", "uniqexact", "uniqhll12", "untuple", "upper",
	"upperutf8", "utc_timestamp", "var_pop", "var_samp", "varpop", "varsamp",
	"visitparamextractbool", "visitparamextractfloat", "visitparamextractint",
	"visitparamextractraw", "visitparamextractstring", "visitparamhas", "week",
	"width_bucket", "windowfunnel", "xxhash64", "year", "yearweek", "yesterday",
}

// builtinFunctions are the functions allowed everywhere in a query: those
// of every engine's list.
var builtinFunctions = setOf(slices.Concat(sqliteFunctions, postgresFunctions, mysqlFunctions, clickhouseFunctions)...)

// clickhouseCombinators are the suffixes ClickHouse adds to an aggregate
// to make another (countIf, uniqExactIf, sumArray, avgOrNull): a name made
// of an allowed aggregate and these suffixes is allowed.
var clickhouseCombinators = []string{"if", "distinct", "ornull", "ordefault", "array", "foreach", "state", "merge", "mergestate", "resample"}

// aggregates are the allowed functions a combinator may follow.
var aggregates = setOf(
	"count", "sum", "avg", "min", "max", "any", "anylast", "anyheavy", "argmin",
	"argmax", "uniq", "uniqexact", "uniqcombined", "uniqcombined64", "uniqhll12",
	"uniqtheta", "grouparray", "groupuniqarray", "quantile", "quantiles",
	"quantileexact", "quantiletdigest", "quantiletiming", "median", "topk",
	"summap", "minmap", "maxmap", "avgweighted", "stddevpop", "stddevsamp",
	"varpop", "varsamp", "groupbitand", "groupbitor", "groupbitxor",
)

// The table functions a query may read FROM, per engine: each makes rows
// out of its arguments' values and reads no table. generate_series is on
// none of them: the SQLite build lacks it, so a PostgreSQL or ClickHouse
// host that wants it adds it with Rules.TableFunctions.
var (
	sqliteTableFunctions     = []string{"json_each", "json_tree", "jsonb_each", "jsonb_tree"}
	postgresTableFunctions   = []string{"unnest", "json_array_elements", "jsonb_array_elements", "json_array_elements_text", "jsonb_array_elements_text", "json_each", "jsonb_each", "json_each_text", "jsonb_each_text", "json_object_keys", "jsonb_object_keys", "regexp_split_to_table", "string_to_table"}
	clickhouseTableFunctions = []string{"numbers"}
)

// builtinTableFunctions are the table functions a query may read FROM:
// those of every engine's list.
var builtinTableFunctions = setOf(slices.Concat(sqliteTableFunctions, postgresTableFunctions, clickhouseTableFunctions)...)

// neverFunctions are functions no rules can allow: they read or write
// files, reach the network or other databases, read tables or settings by a
// name given as text, change the session or the server, or run without
// checking for interruption. Most are also missing from the allowlist; the
// list stops Rules.Functions from allowing them.
var neverFunctions = setOf(
	// SQLite
	"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer",
	"randomblob", "zeroblob", "changes", "total_changes", "last_insert_rowid",
	// PostgreSQL
	"dblink", "query_to_xml", "query_to_xml_and_xmlschema", "table_to_xml",
	"table_to_xml_and_xmlschema", "cursor_to_xml", "database_to_xml",
	"schema_to_xml", "set_config", "current_setting", "currval", "nextval",
	"setval", "lastval", "txid_current", "version", "current_user",
	"session_user", "current_database", "current_schema", "current_schemas",
	"current_catalog", "current_role", "inet_server_addr", "inet_client_addr",
	"has_table_privilege", "to_regclass",
	// MySQL
	"load_file", "sleep", "benchmark", "get_lock", "release_lock",
	"release_all_locks", "is_free_lock", "is_used_lock", "master_pos_wait",
	"source_pos_wait", "user", "system_user", "database", "schema",
	"connection_id", "found_rows", "row_count", "last_insert_id", "sys_eval",
	"sys_exec",
	// ClickHouse
	"file", "url", "s3", "s3cluster", "hdfs", "hdfscluster", "remote",
	"remotesecure", "mysql", "postgresql", "sqlite", "mongodb", "redis", "jdbc",
	"odbc", "input", "executable", "cluster", "clusterallreplicas", "merge",
	"azureblobstorage", "gcs", "iceberg", "deltalake", "hudi", "view",
	"viewifpermitted", "loop", "joinget", "joingetornull", "getsetting",
	"getmacro", "hostname", "fqdn", "currentdatabase", "currentuser",
	"currentschemas", "filesystemavailable", "filesystemcapacity",
	"filesystemunreserved", "throwif", "sleepeachrow", "getserverport",
	"uptime", "tcpport", "hascolumnintable",
)

// neverFunctionPrefixes start function names no rules can allow: the
// catalog and administration functions of PostgreSQL (pg_read_file,
// pg_ls_dir, pg_sleep, pg_terminate_backend, ...) and SQLite
// (sqlite_version, ...), PostgreSQL's large objects (lo_import, lo_export),
// dblink_*, and ClickHouse's dictionary lookups (dictGet, dictHas), which
// read dictionaries by a name given as text.
var neverFunctionPrefixes = []string{"pg_", "sqlite_", "lo_", "dblink", "dict", "sleep"}

// neverFunction reports whether the lower-cased name is a function no rules
// can allow.
func neverFunction(name string) bool {
	if neverFunctions[name] {
		return true
	}
	for _, p := range neverFunctionPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// neverTableFunction reports whether the lower-cased name is a table
// function no rules can allow: the pragma_* functions of SQLite, which
// read the catalog, and everything neverFunction refuses.
func neverTableFunction(name string) bool {
	return strings.HasPrefix(name, "pragma_") || neverFunction(name)
}

// functionAllowed reports whether a query may call the function named name
// (as written).
func (rs *ruleset) functionAllowed(name string) bool {
	l := asciiLower(name)
	if neverFunction(l) {
		return false
	}
	if builtinFunctions[l] || rs.functions[l] {
		return true
	}
	return combined(l, 3)
}

// combined reports whether the lower-cased name is an allowed aggregate
// followed by at most depth ClickHouse combinators: countIf, uniqExactIf,
// sumArrayIf, avgOrNull.
func combined(name string, depth int) bool {
	if aggregates[name] {
		return true
	}
	if depth == 0 {
		return false
	}
	for _, c := range clickhouseCombinators {
		if len(name) > len(c) && strings.HasSuffix(name, c) && combined(name[:len(name)-len(c)], depth-1) {
			return true
		}
	}
	return false
}

// tableFunctionAllowed reports whether a query may read FROM the table
// function named name (as written).
func (rs *ruleset) tableFunctionAllowed(name string) bool {
	l := asciiLower(name)
	if neverTableFunction(l) {
		return false
	}
	return builtinTableFunctions[l] || rs.tableFuncs[l]
}

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
