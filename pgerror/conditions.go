package pgerror

// conditionCodes are PL/pgSQL's condition names (PostgreSQL 15's
// Appendix A, plpgsql's plerrcodes) for the SQLSTATEs mvserver raises and
// the classes they belong to, as an EXCEPTION WHEN clause names them.
var conditionCodes = map[string]string{
	"successful_completion": "00000", "warning": "01000", "no_data": "02000",
	"sql_statement_not_yet_complete": "03000", "connection_exception": "08000",
	"feature_not_supported": "0A000", "invalid_transaction_initiation": "0B000",
	"cardinality_violation": "21000",
	"data_exception":        "22000", "string_data_right_truncation": "22001", "null_value_not_allowed": "22004",
	"datetime_field_overflow": "22008", "invalid_datetime_format": "22007", "division_by_zero": "22012",
	"interval_field_overflow": "22015", "invalid_parameter_value": "22023", "numeric_value_out_of_range": "22003",
	"invalid_text_representation": "22P02", "invalid_binary_representation": "22P03", "invalid_escape_sequence": "22025",
	"character_not_in_repertoire": "22021", "invalid_regular_expression": "2201B", "array_subscript_error": "2202E",
	"invalid_json_text": "22032", "untranslatable_character": "22P05",
	"integrity_constraint_violation": "23000", "restrict_violation": "23001", "not_null_violation": "23502",
	"foreign_key_violation": "23503", "unique_violation": "23505", "check_violation": "23514", "exclusion_violation": "23P01",
	"invalid_cursor_state": "24000", "invalid_transaction_state": "25000", "active_sql_transaction": "25001",
	"read_only_sql_transaction": "25006", "in_failed_sql_transaction": "25P02",
	"invalid_authorization_specification": "28000", "invalid_password": "28P01",
	"dependent_objects_still_exist": "2BP01", "invalid_cursor_name": "34000",
	"transaction_rollback": "40000", "serialization_failure": "40001", "deadlock_detected": "40P01",
	"syntax_error_or_access_rule_violation": "42000", "syntax_error": "42601", "insufficient_privilege": "42501",
	"grouping_error": "42803", "windowing_error": "42P20", "invalid_foreign_key": "42830", "invalid_name": "42602",
	"name_too_long": "42622", "reserved_name": "42939", "datatype_mismatch": "42804", "indeterminate_datatype": "42P18",
	"wrong_object_type": "42809", "undefined_column": "42703", "undefined_function": "42883", "undefined_table": "42P01",
	"undefined_parameter": "42P02", "undefined_object": "42704", "duplicate_column": "42701", "duplicate_cursor": "42P03",
	"duplicate_database": "42P04", "duplicate_function": "42723", "duplicate_prepared_statement": "42P05",
	"duplicate_schema": "42P06", "duplicate_table": "42P07", "duplicate_alias": "42712", "duplicate_object": "42710",
	"ambiguous_column": "42702", "ambiguous_function": "42725", "ambiguous_parameter": "42P08",
	"invalid_column_reference": "42P10", "invalid_column_definition": "42611", "invalid_table_definition": "42P16",
	"invalid_object_definition": "42P17", "program_limit_exceeded": "54000", "too_many_columns": "54011",
	"object_not_in_prerequisite_state": "55000", "object_in_use": "55006", "lock_not_available": "55P03",
	"operator_intervention": "57000", "query_canceled": "57014", "system_error": "58000", "internal_error": "XX000",
	"raise_exception": "P0001", "no_data_found": "P0002", "too_many_rows": "P0003", "assert_failure": "P0004",
}

// ConditionCode is the SQLSTATE of a PL/pgSQL condition name
// (duplicate_object: 42710); ok is false for a name it does not know.
func ConditionCode(name string) (code string, ok bool) {
	code, ok = conditionCodes[name]
	return code, ok
}

// ConditionCatches reports whether an EXCEPTION WHEN condition, given as
// a SQLSTATE (or "others"), catches an error with SQLSTATE code: the same
// code, any code of the class a class code ("23000") names, and for
// "others" every code but query_canceled and assert_failure, as in
// PL/pgSQL.
func ConditionCatches(cond, code string) bool {
	switch {
	case cond == "others":
		return code != "57014" && code != "P0004"
	case cond == code:
		return true
	case len(cond) == 5 && cond[2:] == "000" && len(code) == 5:
		return cond[:2] == code[:2]
	}
	return false
}
