package catalog

// Dataset holds what makes a materialized view or a streaming table more
// than a table: its refresh policy, schedule or trigger, expectations and
// the settings in force at CREATE (R-M1, R-ST1, R-S2, R-S3, R-S4).
type Dataset struct {
	// Policy is AUTO, INCREMENTAL, INCREMENTAL STRICT or FULL; "" for a
	// streaming table (R-ST1: no REFRESH POLICY).
	Policy string `json:"policy"`
	// Streams are the relations a streaming table reads as streams (each
	// refresh processes only the rows committed to them since its
	// checkpoint); its other sources are read whole at each refresh's
	// snapshot (stream–static joins). Empty for a materialized view.
	Streams []uint32 `json:"streams,omitempty"`
	// Schedule and Trigger are mutually exclusive (R-M1).
	Schedule *Schedule `json:"schedule,omitempty"`
	Trigger  *Trigger  `json:"trigger,omitempty"`
	// Expectations are the data-quality constraints of the column list (R-M2).
	Expectations []Expectation `json:"expectations,omitempty"`
	// SearchPath resolves the query's unqualified names as at CREATE.
	SearchPath []string `json:"search_path,omitempty"`
	// TimeZone is the session TimeZone at CREATE: every refresh, manual
	// or scheduled, evaluates the query in it (casts of timestamptz).
	TimeZone string `json:"time_zone,omitempty"`
	// StatementTimeoutMs bounds scheduled and triggered refreshes (R-S4);
	// 0 = the default of 2 days.
	StatementTimeoutMs int64 `json:"statement_timeout_ms,omitempty"`
	// QueryText is the definition as the user wrote it (DESCRIBE, pg_matviews).
	QueryText string `json:"query_text,omitempty"`
	// Unpopulated: CREATE … WITH NO DATA or REFRESH … WITH NO DATA left
	// the materialized view without content; reading it fails with 55000
	// until a refresh populates it (pg_class.relispopulated).
	Unpopulated bool `json:"unpopulated,omitempty"`
}

// Schedule is SCHEDULE EVERY n unit or CRON 'expr' [AT TIME ZONE 'tz'].
type Schedule struct {
	Every    int    `json:"every,omitempty"`
	Unit     string `json:"unit,omitempty"`
	Cron     string `json:"cron,omitempty"`
	TimeZone string `json:"time_zone,omitempty"`
}

// Trigger is TRIGGER ON UPDATE [AT MOST EVERY …].
type Trigger struct {
	AtMostEverySeconds int64 `json:"at_most_every_seconds,omitempty"`
}

// Expectation is one data-quality expectation.
type Expectation struct {
	Name   string `json:"name"`
	Expr   string `json:"expr"`
	Action string `json:"action,omitempty"` // "", "DROP ROW", "FAIL UPDATE"
}
