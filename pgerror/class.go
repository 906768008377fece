package pgerror

// classNames are the SQLSTATE classes of PostgreSQL's errcodes.txt (the
// first two characters of a code), named as there.
var classNames = map[string]string{
	"00": "successful completion", "01": "warning", "02": "no data",
	"03": "SQL statement not yet complete", "08": "connection exception",
	"09": "triggered action exception", "0A": "feature not supported",
	"0B": "invalid transaction initiation", "0F": "locator exception",
	"0L": "invalid grantor", "0P": "invalid role specification",
	"0Z": "diagnostics exception", "20": "case not found",
	"21": "cardinality violation", "22": "data exception",
	"23": "integrity constraint violation", "24": "invalid cursor state",
	"25": "invalid transaction state", "26": "invalid SQL statement name",
	"27": "triggered data change violation", "28": "invalid authorization specification",
	"2B": "dependent privilege descriptors still exist", "2D": "invalid transaction termination",
	"2F": "SQL routine exception", "34": "invalid cursor name",
	"38": "external routine exception", "39": "external routine invocation exception",
	"3B": "savepoint exception", "3D": "invalid catalog name",
	"3F": "invalid schema name", "40": "transaction rollback",
	"42": "syntax error or access rule violation", "44": "WITH CHECK OPTION violation",
	"53": "insufficient resources", "54": "program limit exceeded",
	"55": "object not in prerequisite state", "57": "operator intervention",
	"58": "system error", "72": "snapshot failure", "F0": "configuration file error",
	"HV": "foreign data wrapper error", "P0": "PL/pgSQL error", "XX": "internal error",
}

// ClassName names the class of a SQLSTATE ("22P02": "data exception");
// "error" for a code of no known class.
func ClassName(code string) string {
	if len(code) == 5 {
		if n, ok := classNames[code[:2]]; ok {
			return n
		}
	}
	return "error"
}
