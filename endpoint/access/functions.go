package access

import "strings"

// The functions a query may call are an allowlist: a function the analyzer
// does not know is refused by name, because the engines have hundreds that
// read files, reach the network, read other tables by a name given as text
// or change the session, and a denylist would miss the next one. The list
// holds the common SQL and analytics functions of SQLite, PostgreSQL, MySQL
// and ClickHouse, and every function the library generates itself
// (insight's and materialize's SQL); Rules.Functions extends it.
//
// Names are compared without regard to ASCII case.

// builtinFunctions are the functions allowed everywhere in a query.
var builtinFunctions = setOf(
	// Aggregates, standard and common.
	"count", "sum", "avg", "min", "max", "total", "group_concat", "string_agg",
	"array_agg", "json_agg", "jsonb_agg", "json_object_agg", "jsonb_object_agg",
	"json_group_array", "json_group_object", "json_arrayagg", "json_objectagg",
	"stddev", "stddev_pop", "stddev_samp", "std", "variance", "var_pop", "var_samp",
	"bool_and", "bool_or", "every", "bit_and", "bit_or", "bit_xor",
	"percentile_cont", "percentile_disc", "mode", "median", "corr", "covar_pop",
	"covar_samp", "regr_slope", "regr_intercept", "regr_count", "regr_r2",
	"any_value", "grouping",
	// Window functions.
	"row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile",
	"lag", "lead", "first_value", "last_value", "nth_value",
	// Conditionals and NULL handling.
	"coalesce", "nullif", "ifnull", "if", "iif", "nvl", "greatest", "least",
	"isnull", "likely", "unlikely",
	// Numbers.
	"abs", "ceil", "ceiling", "floor", "round", "trunc", "truncate", "sign",
	"sqrt", "cbrt", "exp", "ln", "log", "log10", "log2", "power", "pow", "mod",
	"pi", "degrees", "radians", "sin", "cos", "tan", "asin", "acos", "atan",
	"atan2", "div", "random", "rand", "width_bucket",
	// Text.
	"length", "char_length", "character_length", "octet_length", "bit_length",
	"lower", "upper", "lcase", "ucase", "trim", "ltrim", "rtrim", "btrim",
	"substr", "substring", "substring_index", "left", "right", "replace",
	"instr", "position", "locate", "strpos", "concat", "concat_ws", "lpad",
	"rpad", "repeat", "reverse", "split_part", "initcap", "ascii", "char",
	"chr", "hex", "unhex", "printf", "format", "quote", "glob", "like",
	"regexp", "regexp_replace", "regexp_like", "regexp_substr", "regexp_instr",
	"regexp_matches", "regexp_match", "regexp_count", "starts_with", "translate",
	"unicode", "md5", "sha1", "sha2", "sha256", "crc32", "to_hex", "string_to_array",
	"array_to_string", "array_length", "cardinality", "array_position",
	"soundex", "space",
	// Dates and times.
	"date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff",
	"now", "date_trunc", "date_part", "extract", "age", "make_date",
	"make_timestamp", "make_interval", "to_char", "to_date", "to_timestamp",
	"to_number", "date_bin", "justify_days", "justify_hours", "justify_interval",
	"clock_timestamp", "statement_timestamp", "transaction_timestamp", "timezone",
	"date_format", "date_add", "date_sub", "adddate", "subdate", "datediff",
	"timestampdiff", "timestampadd", "str_to_date", "unix_timestamp",
	"from_unixtime", "curdate", "curtime", "sysdate", "utc_timestamp",
	"utc_date", "utc_time", "weekday", "dayofweek", "dayofmonth", "dayofyear",
	"dayname", "monthname", "week", "weekofyear", "yearweek", "year", "month",
	"day", "hour", "minute", "second", "quarter", "last_day", "makedate",
	"convert_tz", "time_format", "sec_to_time", "time_to_sec", "to_days",
	"from_days", "period_diff",
	// JSON.
	"json", "json_extract", "json_type", "json_valid", "json_array_length",
	"json_array", "json_object", "json_quote", "json_set", "json_insert",
	"json_replace", "json_remove", "json_patch", "jsonb", "jsonb_extract",
	"jsonb_typeof", "json_typeof", "jsonb_extract_path", "jsonb_extract_path_text",
	"json_extract_path", "json_extract_path_text", "jsonb_array_length",
	"jsonb_build_object", "json_build_object", "jsonb_build_array",
	"json_build_array", "to_json", "to_jsonb", "row_to_json", "jsonb_strip_nulls",
	"json_strip_nulls", "jsonb_exists", "json_unquote", "json_contains",
	"json_contains_path", "json_keys", "json_length", "json_value", "json_search",
	"json_depth", "json_pretty",
	// Casts and values.
	"cast", "try_cast", "convert", "typeof", "uuid", "gen_random_uuid",
	// ClickHouse: aggregates (see clickhouseCombinators for countIf and
	// friends).
	"uniq", "uniqexact", "uniqcombined", "uniqcombined64", "uniqhll12",
	"uniqtheta", "any", "anylast", "anyheavy", "argmin", "argmax", "grouparray",
	"groupuniqarray", "grouparraysorted", "groupbitand", "groupbitor",
	"groupbitxor", "quantile", "quantiles", "quantileexact", "quantilesexact",
	"quantiletdigest", "quantilestdigest", "quantiletiming", "quantiledeterministic",
	"topk", "topkweighted", "summap", "minmap", "maxmap", "avgweighted",
	"simplelinearregression", "stddevpop", "stddevsamp", "varpop", "varsamp",
	"covarpop", "covarsamp", "sumwithoverflow", "sumkahan", "entropy",
	"retention", "windowfunnel", "sequencematch", "sequencecount",
	"laginframe", "leadinframe", "exponentialmovingaverage",
	// ClickHouse: conditionals, numbers, text.
	"multiif", "nullif", "assumenotnull", "tonullable", "isnotnull", "isnan",
	"isfinite", "isinfinite", "intdiv", "intdivorzero", "modulo", "negate",
	"roundbankers", "rounddown", "roundtoexp2", "lowerutf8", "upperutf8",
	"lengthutf8", "substringutf8", "position", "positionutf8",
	"positioncaseinsensitive", "positioncaseinsensitiveutf8", "startswith",
	"endswith", "empty", "notempty", "splitbychar", "splitbystring",
	"splitbyregexp", "arraystringconcat", "replaceall", "replaceone",
	"replaceregexpall", "replaceregexpone", "match", "extract", "extractall",
	"multisearchany", "trimboth", "trimleft", "trimright", "leftpad", "rightpad",
	"tostring", "tofixedstring", "toint8", "toint16", "toint32", "toint64",
	"touint8", "touint16", "touint32", "touint64", "tofloat32", "tofloat64",
	"todecimal32", "todecimal64", "todecimal128", "toint32ornull",
	"toint64ornull", "tofloat64ornull", "toint64orzero", "tofloat64orzero",
	"tobool", "touuid", "reinterpretasstring", "accuratecast",
	"accuratecastornull", "formatreadablesize", "formatreadablequantity",
	"cityhash64", "siphash64", "xxhash64", "farmhash64", "murmurhash3_64",
	"generateuuidv4", "rand64", "randcanonical",
	// ClickHouse: dates.
	"todate", "todate32", "todatetime", "todatetime64", "todateornull",
	"todatetimeornull", "todatetime64ornull", "parsedatetimebesteffort",
	"parsedatetimebesteffortornull", "parsedatetimebesteffortorzero",
	"parsedatetime", "parsedatetimeornull", "tostartofyear", "tostartofquarter",
	"tostartofmonth", "tostartofweek", "tomonday", "tostartofday",
	"tostartofhour", "tostartofminute", "tostartofsecond",
	"tostartoffiveminutes", "tostartoftenminutes", "tostartoffifteenminutes",
	"tostartofinterval", "toyear", "toquarter", "tomonth", "todayofmonth",
	"todayofweek", "todayofyear", "tohour", "tominute", "tosecond",
	"toyyyymm", "toyyyymmdd", "toyyyymmddhhmmss", "toisoweek", "toisoyear",
	"toweek", "toyearweek", "tounixtimestamp", "tounixtimestamp64milli",
	"fromunixtimestamp", "fromunixtimestamp64milli", "formatdatetime",
	"datediff", "date_diff", "dateadd", "date_add", "datesub", "date_sub",
	"datetrunc", "date_trunc", "timestampadd", "timestampsub", "adddays",
	"addhours", "addminutes", "addseconds", "addweeks", "addmonths", "addyears",
	"subtractdays", "subtracthours", "subtractminutes", "subtractseconds",
	"subtractweeks", "subtractmonths", "subtractyears", "totimezone", "today",
	"yesterday", "timeslot", "torelativedaynum", "torelativehournum",
	"tointervalsecond", "tointervalminute", "tointervalhour", "tointervalday",
	"tointervalweek", "tointervalmonth", "tointervalyear",
	// ClickHouse: JSON.
	"jsonextract", "jsonextractstring", "jsonextractint", "jsonextractuint",
	"jsonextractfloat", "jsonextractbool", "jsonextractraw", "jsonextractkeys",
	"jsonextractarrayraw", "jsonextractkeysandvalues", "jsonhas", "jsonlength",
	"jsontype", "isvalidjson", "simplejsonextractstring", "simplejsonextractint",
	"simplejsonextractfloat", "simplejsonextractbool", "simplejsonextractraw",
	"simplejsonhas", "visitparamextractstring", "visitparamextractint",
	"visitparamextractfloat", "visitparamextractbool", "visitparamextractraw",
	"visitparamhas", "tojsonstring",
	// ClickHouse: arrays, tuples, maps.
	"array", "tuple", "map", "arrayjoin", "has", "hasany", "hasall", "indexof",
	"arrayelement", "arraymap", "arrayfilter", "arraycount", "arraysum",
	"arrayavg", "arraymin", "arraymax", "arraydistinct", "arraysort",
	"arrayreversesort", "arrayslice", "arrayconcat", "arrayreverse",
	"arrayuniq", "arrayenumerate", "arrayexists", "arrayall", "arrayfirst",
	"arraycumsum", "arraycompact", "arrayzip", "arrayflatten", "arrayresize",
	"countequal", "emptyarraystring", "range", "tupleelement", "untuple",
	"mapkeys", "mapvalues", "mapcontains", "columns",
	// ClickHouse: URLs (text parsing only).
	"domain", "domainwithoutwww", "topleveldomain", "protocol", "path",
	"pathfull", "querystring", "fragment", "extracturlparameter",
	"extracturlparameters", "cutquerystring", "cutwww",
)

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

// builtinTableFunctions are the table functions a query may read FROM:
// each makes rows out of its arguments' values and reads no table.
var builtinTableFunctions = setOf(
	"json_each", "json_tree", // SQLite
	"generate_series", "unnest", "json_array_elements", "jsonb_array_elements",
	"json_array_elements_text", "jsonb_array_elements_text", "jsonb_each",
	"jsonb_each_text", "json_each_text", "json_object_keys", "jsonb_object_keys",
	"regexp_split_to_table", "string_to_table", // PostgreSQL
	"numbers", // ClickHouse
)

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
