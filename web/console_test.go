package web_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mvserver/mvserver/app"
)

// seed creates a small pipeline: two sources (one without change data
// feed or row tracking), views over them, a view on a view, a FULL-policy
// view and a streaming table.
func seed(e *env) {
	for _, q := range []string{
		`CREATE TABLE sales (id INT PRIMARY KEY, region STRING, amount DECIMAL(10,2))`,
		`INSERT INTO sales VALUES (1, 'north', 10.00), (2, 'south', 20.50), (3, 'north', 5.25)`,
		`CREATE TABLE legacy (id INT PRIMARY KEY, note STRING) TBLPROPERTIES (delta.enableChangeDataFeed = false, delta.enableRowTracking = false)`,
		`INSERT INTO legacy VALUES (1, 'a'), (2, 'b')`,
		`CREATE MATERIALIZED VIEW by_region SCHEDULE CRON '0 0 * * * ?' COMMENT 'sales per region' AS
		 SELECT region, sum(amount) AS total, count(*) AS n FROM sales WHERE 100 / id IS NOT NULL GROUP BY region`,
		`CREATE MATERIALIZED VIEW top_region AS SELECT region, total FROM by_region WHERE total > 10`,
		`CREATE MATERIALIZED VIEW legacy_notes AS SELECT id, note FROM legacy WHERE note <> 'x' AND 100 / id IS NOT NULL`,
		`CREATE MATERIALIZED VIEW full_only REFRESH POLICY FULL AS SELECT id FROM legacy`,
		`CREATE STREAMING TABLE sales_feed TRIGGER ON UPDATE AS SELECT id, amount FROM STREAM(sales)`,
	} {
		e.exec(q)
	}
}

// TestOverview: every dataset with its schema, status of the last run,
// technique, next run, schedule or trigger and policy; the filters; the
// insights banner.
func TestOverview(t *testing.T) {
	e := start(t, app.Config{})
	body := e.page("/")
	if !strings.Contains(body, "No materialized view or streaming table yet") {
		t.Fatalf("an empty server's overview:\n%s", body)
	}
	seed(e)
	e.exec(`REFRESH MATERIALIZED VIEW by_region`)
	body = e.page("/")
	for _, want := range []string{
		`data-name="public.by_region" data-status="COMPLETED"`,
		`data-name="public.top_region"`, `data-name="public.legacy_notes"`, `data-name="public.full_only"`,
		`data-name="public.sales_feed"`,
		`SCHEDULE CRON &#39;0 0 * * * ?&#39; AT TIME ZONE &#39;UTC&#39;`,
		`TRIGGER ON UPDATE`,
		`append (streaming)`,
		`<td>FULL</td>`, `<td>AUTO</td>`,
		`NO_OP`, // the manual refresh found nothing changed
		`streaming table`, `materialized view`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("overview lacks %q", want)
		}
	}
	if t.Failed() {
		t.Fatalf("overview:\n%s", body)
	}
	// The next run of the hourly schedule is a time.
	if !regexp.MustCompile(`data-name="public.by_region"[\s\S]*?<td>\d{4}-\d\d-\d\d \d\d:00:00 UTC</td>`).MatchString(body) {
		t.Errorf("by_region shows no next run time:\n%s", body)
	}
	// The banner offers exactly the view whose source lacks the features,
	// not the FULL-policy one.
	banner := section(body, "insights")
	if !strings.Contains(banner, `data-view="public.legacy_notes"`) || strings.Contains(banner, "full_only") || strings.Contains(banner, "by_region") {
		t.Fatalf("insights banner:\n%s", banner)
	}
	if !strings.Contains(banner, "CHANGE_DATA_FEED_NOT_ENABLED") || !strings.Contains(banner, "delta.enableRowTracking = true") {
		t.Fatalf("the banner's dialog does not list the changes:\n%s", banner)
	}

	// Filters: by name, by status.
	body = e.page("/?q=REGION")
	if !strings.Contains(body, "public.by_region") || !strings.Contains(body, "public.top_region") || strings.Contains(body, `data-name="public.legacy_notes"`) {
		t.Fatalf("?q=REGION:\n%s", body)
	}
	if !strings.Contains(body, "2 of 5") {
		t.Errorf("?q=REGION does not say 2 of 5")
	}
	// Every dataset ran at its CREATE; make one fail (a row its query
	// divides by zero: a column it uses cannot be dropped under it).
	e.exec(`INSERT INTO legacy VALUES (0, 'zero')`)
	if _, err := e.sql.Exec(t.Context(), `REFRESH MATERIALIZED VIEW legacy_notes`); err == nil {
		t.Fatal("refreshing legacy_notes over a row it divides by zero succeeded")
	}
	body = e.page("/?status=FAILED")
	if n := strings.Count(body, `data-status="FAILED"`); n != 1 || !strings.Contains(body, `data-name="public.legacy_notes" data-status="FAILED"`) {
		t.Fatalf("?status=FAILED lists %d datasets, want legacy_notes:\n%s", n, body)
	}
	if !strings.Contains(body, `title="division by zero"`) {
		t.Errorf("the FAILED badge does not carry the error:\n%s", body)
	}
	body = e.page("/?status=COMPLETED")
	if n := strings.Count(body, `data-status="COMPLETED"`); n != 4 {
		t.Fatalf("?status=COMPLETED lists %d datasets, want 4:\n%s", n, body)
	}
	if body := e.page("/?status=NEVER"); strings.Contains(body, `data-status=`) {
		t.Fatalf("?status=NEVER lists datasets: each ran at its CREATE")
	}
	if body := e.page("/?q=nothing-like-this"); !strings.Contains(body, "No dataset matches the filter") {
		t.Fatalf("a filter matching nothing:\n%s", body)
	}
}

// TestDatasetPage: definition, columns, properties, the analysis with its
// blockers and fixes, the lineage graph, the history chart and the event
// log with its filters.
func TestDatasetPage(t *testing.T) {
	e := start(t, app.Config{})
	seed(e)
	e.exec(`INSERT INTO sales VALUES (4, 'east', 1.00)`)
	e.exec(`REFRESH MATERIALIZED VIEW by_region`)
	e.exec(`INSERT INTO legacy VALUES (3, 'c')`)
	e.exec(`REFRESH MATERIALIZED VIEW legacy_notes`)

	body := e.page("/datasets/public/by_region")
	for _, want := range []string{
		`<h1>by_region</h1>`, `sales per region`,
		`<span class="kw">SELECT</span>`, `<span class="kw">GROUP</span>`, // highlighted definition
		`<td>region</td>`, `<td>total</td>`, // columns
		`<th>Refresh policy</th><td>AUTO</td>`,
		`<th>Schedule</th><td>CRON &#39;0 0 * * * ?&#39; AT TIME ZONE &#39;UTC&#39;</td>`,
		`<th>Next refresh</th>`,
		`delta.enableChangeDataFeed`, // table properties
		`<span class="badge ok">incremental</span>`,
		`GROUP_AGGREGATE`,
		`id="next-technique">NO_OP</b>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("by_region's page lacks %q", want)
		}
	}
	// Lineage: the source to the left, the view reading it to the right,
	// each dataset a link.
	lin := section(body, "lineage")
	for _, want := range []string{`data-node="public.sales"`, `data-node="public.by_region"`, `data-node="public.top_region"`,
		`<a href="/datasets/public/top_region"`, `class="node materialized_view focus"`} {
		if !strings.Contains(lin, want) {
			t.Errorf("lineage lacks %q", want)
		}
	}
	// sales_feed reads sales too, but neither reads nor is read by by_region.
	if strings.Contains(lin, `data-node="public.legacy"`) || strings.Contains(lin, `data-node="public.sales_feed"`) {
		t.Errorf("lineage shows an unrelated relation")
	}
	if n := strings.Count(lin, `class="edge"`); n != 2 {
		t.Errorf("lineage has %d edges, want 2 (sales→by_region, by_region→top_region)", n)
	}
	// top_region's lineage has two levels upstream.
	lin = section(e.page("/datasets/public/top_region"), "lineage")
	if !strings.Contains(lin, `data-node="public.sales"`) || !strings.Contains(lin, `<a href="/datasets/public/by_region"`) {
		t.Errorf("top_region's lineage:\n%s", lin)
	}
	// History: the run of CREATE and the manual run, with tooltips.
	bs := bars(body)
	if len(bs) != 2 || bs[0][1] != "COMPLETED" || bs[1][1] != "COMPLETED" {
		t.Fatalf("history bars %v, want two COMPLETED", bs)
	}
	if !regexp.MustCompile(`data-tip="[^"]*technique GROUP_AGGREGATE[^"]*rows read \d+, written \d+`).MatchString(body) {
		t.Errorf("the bar's tooltip lacks technique and rows")
	}
	// The event log: the run's events, newest first; the filters.
	ev := section(body, "events")
	if !strings.Contains(ev, `has been planned to be executed as GROUP_AGGREGATE.`) || !strings.Contains(ev, `data-type="user_action"`) {
		t.Fatalf("event log:\n%s", ev)
	}
	ev = section(e.page("/datasets/public/by_region?type=planning_information"), "events")
	if strings.Contains(ev, `data-type="user_action"`) || strings.Count(ev, `data-type="planning_information"`) != 2 {
		t.Fatalf("event log filtered by type:\n%s", ev)
	}
	ev = section(e.page("/datasets/public/by_region?level=METRICS"), "events")
	if strings.Contains(ev, `data-level="INFO"`) || !strings.Contains(ev, `data-level="METRICS"`) {
		t.Fatalf("event log filtered by level:\n%s", ev)
	}

	// A blocked view: each blocker with where it is and its fix, marked in
	// the definition.
	e.exec(`INSERT INTO legacy VALUES (4, 'd')`)
	body = e.page("/datasets/public/legacy_notes")
	an := section(body, "analysis")
	if !strings.Contains(an, `<span class="badge warn">blocked</span>`) {
		t.Errorf("legacy_notes is not shown blocked")
	}
	for _, want := range []string{`CHANGE_DATA_FEED_NOT_ENABLED`, `ROW_TRACKING_NOT_ENABLED`, `line 1, column 22`,
		`ALTER TABLE public.legacy SET TBLPROPERTIES (delta.enableChangeDataFeed = true)`, `FULL_RECOMPUTE</b>`} {
		if !strings.Contains(an, strings.Replace(esc(want), "&lt;/b&gt;", "</b>", 1)) {
			t.Errorf("legacy_notes' analysis lacks %q", want)
		}
	}
	if !strings.Contains(body, `<mark class="blocker"`) {
		t.Errorf("the blockers are not marked in the definition")
	}
	if !strings.Contains(section(body, "insights"), `data-view="public.legacy_notes"`) {
		t.Errorf("legacy_notes' page has no insights banner")
	}
	// A view that can never be incremental says so.
	e.exec(`CREATE MATERIALIZED VIEW last_sales AS SELECT id FROM sales LIMIT 2`)
	an = section(e.page("/datasets/public/last_sales"), "analysis")
	if !strings.Contains(an, "never incremental") || !strings.Contains(an, "LIMIT") {
		t.Errorf("last_sales' analysis:\n%s", an)
	}
	// A streaming table's page.
	body = e.page("/datasets/public/sales_feed")
	if !strings.Contains(body, `A streaming table processes only the rows`) || !strings.Contains(body, `<th>Trigger</th><td>ON UPDATE</td>`) {
		t.Errorf("sales_feed's page:\n%s", body)
	}
	// Unknown names and plain tables have no page.
	for _, p := range []string{"/datasets/public/nope", "/datasets/nope/by_region", "/datasets/public/sales", "/no/such/page"} {
		if code, _ := e.get(p); code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, code)
		}
	}
}

// esc escapes s as html/template does in text.
func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

var sampleRE = regexp.MustCompile(`(?m)^(\w+)(\{[^}]*\})? (\S+)$`)

// metric is the value of one sample of a scrape (-1 if absent).
func metric(scrape, name, labels string) float64 {
	for _, m := range sampleRE.FindAllStringSubmatch(scrape, -1) {
		if m[1] == name && m[2] == labels {
			v, _ := strconv.ParseFloat(m[3], 64)
			return v
		}
	}
	return -1
}

// TestMetrics: a scrape after refreshes counts them by technique and
// status, their durations and rows, the sessions, queries and WAL fsyncs.
func TestMetrics(t *testing.T) {
	e := start(t, app.Config{})
	seed(e)
	e.exec(`INSERT INTO sales VALUES (4, 'east', 1.00)`)
	e.exec(`REFRESH MATERIALIZED VIEW by_region`)
	e.exec(`REFRESH MATERIALIZED VIEW by_region FULL`)
	e.exec(`REFRESH MATERIALIZED VIEW by_region`)
	if _, err := e.sql.Exec(t.Context(), `REFRESH MATERIALIZED VIEW no_such_view`); err == nil {
		t.Fatal("refreshing a missing view succeeded")
	}
	// Statements with parameters go through the extended protocol.
	if n := e.queryInt(`SELECT count(*) FROM sales WHERE id > ` + "0"); n != 4 {
		t.Fatalf("sales has %d rows", n)
	}
	var n int64
	if err := e.sql.QueryRow(t.Context(), `SELECT count(*) FROM sales WHERE id > $1`, 1).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := e.sql.QueryRow(t.Context(), `SELECT 1 / $1`, 0).Scan(&n); err == nil {
		t.Fatal("1/0 succeeded")
	}
	// The INSERT woke sales_feed's TRIGGER ON UPDATE: wait until that
	// background refresh is over, so the scrape sees no refresh running.
	var code int
	var scrape string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if code, scrape = e.get("/metrics"); code != 200 {
			t.Fatalf("/metrics: %d", code)
		}
		if metric(scrape, "mvserver_refreshes_running", "") == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, c := range []struct {
		name, labels string
		want         float64
	}{
		{"mvserver_refreshes_total", `{status="COMPLETED",technique="GROUP_AGGREGATE"}`, 1},
		// the four CREATEs' first populations and the REFRESH … FULL
		{"mvserver_refreshes_total", `{status="COMPLETED",technique="FULL_RECOMPUTE"}`, 5},
		{"mvserver_refreshes_total", `{status="COMPLETED",technique="NO_OP"}`, 1},
		{"mvserver_refresh_duration_seconds_count", `{technique="GROUP_AGGREGATE"}`, 1},
		{"mvserver_refresh_duration_seconds_count", `{technique="FULL_RECOMPUTE"}`, 5},
		{"mvserver_refreshes_running", ``, 0},
		{"mvserver_connections", ``, 1},
	} {
		if got := metric(scrape, c.name, c.labels); got != c.want {
			t.Errorf("%s%s = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	for _, c := range []struct{ name, labels string }{
		{"mvserver_refresh_rows_read_total", `{technique="GROUP_AGGREGATE"}`},
		{"mvserver_refresh_rows_written_total", `{technique="GROUP_AGGREGATE"}`},
		{"mvserver_refresh_rows_read_total", `{technique="FULL_RECOMPUTE"}`},
		{"mvserver_queries_total", `{protocol="simple",result="ok"}`},
		{"mvserver_queries_total", `{protocol="extended",result="ok"}`},
		{"mvserver_queries_total", `{protocol="extended",result="error"}`},
		{"mvserver_connections_total", ``},
		{"mvserver_commit_wal_fsync_seconds_count", ``},
		{"go_goroutines", ``},
	} {
		if got := metric(scrape, c.name, c.labels); got <= 0 {
			t.Errorf("%s%s = %v, want > 0", c.name, c.labels, got)
		}
	}
	if !strings.Contains(scrape, "# TYPE mvserver_refresh_duration_seconds histogram") || !strings.Contains(scrape, "# TYPE mvserver_commit_wal_fsync_seconds histogram") {
		t.Errorf("the histograms are not typed as such")
	}
	if t.Failed() {
		t.Logf("scrape:\n%s", scrape)
	}
}

// TestHealth: /healthz and /readyz answer 200 while the server runs.
func TestHealth(t *testing.T) {
	e := start(t, app.Config{})
	for _, p := range []string{"/healthz", "/readyz"} {
		code, body := e.get(p)
		if code != 200 || (body != "ok\n" && body != "ready\n") {
			t.Errorf("GET %s: %d %q", p, code, body)
		}
	}
}

// TestRefreshActions: Refresh and Full refresh run REFRESH through a
// session as the console's user; the page shows the outcome and a new bar.
func TestRefreshActions(t *testing.T) {
	e := start(t, app.Config{})
	seed(e)
	const page = "/datasets/public/by_region"
	if n := len(bars(e.page(page))); n != 1 {
		t.Fatalf("%d bars before any refresh, want the one of CREATE", n)
	}
	e.exec(`INSERT INTO sales VALUES (4, 'east', 1.00)`)
	loc := e.act(page, "refresh")
	if !strings.HasPrefix(loc, page+"?action=") {
		t.Fatalf("redirect to %q", loc)
	}
	body := e.page(loc)
	act := section(body, "actions")
	if !strings.Contains(act, `data-state="ok"`) || !strings.Contains(act, `REFRESH MATERIALIZED VIEW &#34;public&#34;.&#34;by_region&#34;`) ||
		!strings.Contains(act, "refresh planned as GROUP_AGGREGATE") {
		t.Fatalf("the action's outcome:\n%s", act)
	}
	if bs := bars(body); len(bs) != 2 {
		t.Fatalf("bars after Refresh: %v", bs)
	}
	if got := e.queryString(`SELECT technique FROM refresh_history WHERE view_name = 'by_region' ORDER BY start_time DESC LIMIT 1`); got != "GROUP_AGGREGATE" {
		t.Fatalf("history technique %q", got)
	}
	if got := e.queryString(`SELECT cause FROM refresh_history WHERE view_name = 'by_region' ORDER BY start_time DESC LIMIT 1`); got != "MANUAL" {
		t.Fatalf("history cause %q", got)
	}
	if n := e.queryInt(`SELECT n FROM by_region WHERE region = 'east'`); n != 1 {
		t.Fatalf("east: %d", n)
	}

	body = e.page(e.act(page, "full-refresh"))
	if bs := bars(body); len(bs) != 3 {
		t.Fatalf("bars after Full refresh: %v", bs)
	}
	if got := e.queryString(`SELECT technique FROM refresh_history WHERE view_name = 'by_region' ORDER BY start_time DESC LIMIT 1`); got != "FULL_RECOMPUTE" {
		t.Fatalf("Full refresh ran %q", got)
	}
	if !strings.Contains(section(body, "actions"), "Full refresh") {
		t.Fatalf("the page does not show the Full refresh")
	}
	// A streaming table's Refresh is REFRESH STREAMING TABLE.
	body = e.page(e.act("/datasets/public/sales_feed", "refresh"))
	if !strings.Contains(body, `REFRESH STREAMING TABLE &#34;public&#34;.&#34;sales_feed&#34;`) || !strings.Contains(section(body, "actions"), `data-state="ok"`) {
		t.Fatalf("streaming table refresh:\n%s", section(body, "actions"))
	}
	// A failing refresh shows its SQLSTATE.
	e.exec(`INSERT INTO sales VALUES (0, 'zero', 1.00)`) // by_region divides by id
	act = section(e.page(e.act(page, "refresh")), "actions")
	if !strings.Contains(act, `data-state="error"`) || !strings.Contains(act, "SQLSTATE 22012") {
		t.Fatalf("a failed refresh's outcome:\n%s", act)
	}
	if got := e.queryString(`SELECT status FROM refresh_history WHERE view_name = 'by_region' ORDER BY start_time DESC LIMIT 1`); got != "FAILED" {
		t.Fatalf("history status %q", got)
	}
	if bs := bars(e.page(page)); len(bs) != 4 || bs[0][1] != "FAILED" {
		t.Fatalf("bars after a failed refresh: %v (newest first)", bs)
	}
	if !strings.Contains(e.page("/?status=FAILED"), `data-name="public.by_region"`) {
		t.Fatalf("the overview does not show by_region FAILED")
	}
}

// TestStopAction: Stop runs CANCEL REFRESH; the refresh it stops changes
// nothing and is recorded CANCELED (R-S5).
func TestStopAction(t *testing.T) {
	e := start(t, app.Config{ConsoleActionWait: 20 * time.Millisecond})
	e.exec(`CREATE TABLE big (i INT)`)
	e.exec(`INSERT INTO big VALUES (0)`)
	e.exec(`CREATE MATERIALIZED VIEW slow AS SELECT count(*) AS n FROM big a, big b`)
	var sb strings.Builder
	sb.WriteString("INSERT INTO big VALUES (1)")
	for i := 2; i < 6000; i++ {
		fmt.Fprintf(&sb, ",(%d)", i)
	}
	e.exec(sb.String())
	const page = "/datasets/public/slow"
	loc := e.act(page, "refresh")
	refreshID := strings.TrimSuffix(strings.TrimPrefix(loc, page+"?action="), "#actions")
	// 36M joined rows: the refresh runs until stopped.
	e.waitPage(page, "the refresh shows as running", func(b string) bool { return strings.Contains(b, `id="status" data-status="RUNNING"`) })
	stopped := e.page(e.act(page, "stop"))
	if !strings.Contains(section(stopped, "actions"), `data-state="ok"`) || !strings.Contains(stopped, "CANCEL REFRESH &#34;public&#34;.&#34;slow&#34;") {
		t.Fatalf("Stop's outcome:\n%s", section(stopped, "actions"))
	}
	body := e.waitPage(page+"?action="+refreshID, "the refresh ends", func(b string) bool {
		return strings.Contains(section(b, "actions"), `data-state="error"`)
	})
	if !strings.Contains(section(body, "actions"), "SQLSTATE 57014") {
		t.Fatalf("the stopped refresh's outcome:\n%s", section(body, "actions"))
	}
	if n := e.queryInt(`SELECT n FROM slow`); n != 1 {
		t.Fatalf("the stopped refresh changed the view: n = %d", n)
	}
	if got := e.queryString(`SELECT status FROM refresh_history WHERE view_name = 'slow' ORDER BY start_time DESC LIMIT 1`); got != "CANCELED" {
		t.Fatalf("history: %q", got)
	}
	// The action's outcome can show a moment before the run record of
	// the canceled refresh commits: wait for its bar.
	body = e.waitPage(page, "the canceled run's bar", func(b string) bool {
		bs := bars(b)
		return len(bs) == 2 && bs[0][1] == "CANCELED"
	})
	if bs := bars(body); len(bs) != 2 || bs[0][1] != "CANCELED" {
		t.Fatalf("bars: %v (newest first)", bs)
	}
	// Stop when nothing runs says so.
	act := section(e.page(e.act(page, "stop")), "actions")
	if !strings.Contains(act, "no refresh of slow is running") {
		t.Fatalf("Stop with nothing running:\n%s", act)
	}
}

// TestEnableIncrementalAction: the banner's Enable runs ALTER MATERIALIZED
// VIEW … ENABLE INCREMENTAL as the console's user; the tables its dialog
// listed are exactly the ones the statement changed.
func TestEnableIncrementalAction(t *testing.T) {
	e := start(t, app.Config{})
	seed(e)
	e.exec(`CREATE VIEW legacy_v AS SELECT id, note FROM legacy`)
	e.exec(`CREATE TABLE other (id INT PRIMARY KEY) TBLPROPERTIES (delta.enableRowTracking = false)`)
	e.exec(`CREATE MATERIALIZED VIEW joined AS SELECT l.id, l.note FROM legacy_v l JOIN other o ON o.id = l.id JOIN sales s ON s.id = l.id`)
	body := e.page("/")
	banner := section(body, "insights")
	item := banner[strings.Index(banner, `data-view="public.joined"`):]
	item = item[:strings.Index(item, "</li>")]
	dialog := regexp.MustCompile(`<td><small>(table|materialized view)</small> <b>([^<]+)</b></td><td>((?:<code>[^<]+</code><br>)+)</td>`).FindAllStringSubmatch(item, -1)
	var listed []string
	for _, m := range dialog {
		listed = append(listed, m[2]+": "+strings.Join(regexp.MustCompile(`<code>([^<]+) = true</code>`).FindAllString(m[3], -1), " "))
	}
	want := []string{
		"public.legacy: <code>delta.enableChangeDataFeed = true</code> <code>delta.enableRowTracking = true</code>",
		"public.other: <code>delta.enableRowTracking = true</code>",
	}
	if strings.Join(listed, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the dialog lists\n%s\nwant\n%s\n%s", strings.Join(listed, "\n"), strings.Join(want, "\n"), item)
	}
	// Enable from the overview's banner returns to the overview.
	resp, _ := e.post("/datasets/public/joined/enable-incremental", url.Values{"csrf_token": {e.token("/")}, "return": {"overview"}})
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/?action=") {
		t.Fatalf("POST enable-incremental: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	body = e.page(resp.Header.Get("Location"))
	act := body[strings.Index(body, `class="action`):]
	act = act[:strings.Index(act, "</ul>")]
	if !strings.Contains(act, `data-state="ok"`) ||
		!strings.Contains(act, "set delta.enableChangeDataFeed = true, delta.enableRowTracking = true on table public.legacy") ||
		!strings.Contains(act, "set delta.enableRowTracking = true on table public.other") || strings.Count(act, "<li>") != 2 {
		t.Fatalf("the statement's notices do not match the dialog:\n%s", act)
	}
	if strings.Contains(section(body, "insights"), `data-view="public.joined"`) {
		t.Fatalf("joined is still in the banner")
	}
	for _, q := range []string{`SHOW TBLPROPERTIES legacy (delta.enableChangeDataFeed)`, `SHOW TBLPROPERTIES other (delta.enableRowTracking)`} {
		var k, v string
		if err := e.sql.QueryRow(t.Context(), q).Scan(&k, &v); err != nil || v != "true" {
			t.Fatalf("%s: %q %v", q, v, err)
		}
	}
	// The event log has the user action, by the console's user.
	ev := section(e.page("/datasets/public/joined?type=user_action"), "events")
	if !strings.Contains(ev, "User mvserver enabled incremental refresh on &#39;joined&#39;.") {
		t.Fatalf("event log:\n%s", ev)
	}
	// legacy_notes read only legacy: it no longer needs anything either.
	if b := e.page("/"); strings.Contains(b, `id="insights"`) {
		t.Fatalf("the banner is still there:\n%s", section(b, "insights"))
	}
	// On a view that can never be incremental the statement's error shows.
	e.exec(`CREATE TABLE logs (id INT) TBLPROPERTIES (delta.enableChangeDataFeed = false)`)
	e.exec(`CREATE MATERIALIZED VIEW last_logs AS SELECT id FROM logs LIMIT 10`)
	act = section(e.page(e.act("/datasets/public/last_logs", "enable-incremental")), "actions")
	if !strings.Contains(act, "SQLSTATE 0A000") || !strings.Contains(act, "can never be refreshed incrementally") {
		t.Fatalf("ENABLE INCREMENTAL on a LIMIT view:\n%s", act)
	}
	// A streaming table has no such action.
	resp, _ = e.post("/datasets/public/sales_feed/enable-incremental", url.Values{"csrf_token": {e.token("/datasets/public/sales_feed")}})
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("enable-incremental on a streaming table: %d", resp.StatusCode)
	}
}

// TestCSRF: a POST without the session's token is refused with 403 and
// runs nothing.
func TestCSRF(t *testing.T) {
	e := start(t, app.Config{})
	seed(e)
	const page = "/datasets/public/by_region"
	good := e.token(page)
	runs := func() int64 { return e.queryInt(`SELECT count(*) FROM refresh_history WHERE view_name = 'by_region'`) }
	before := runs()
	for name, form := range map[string]url.Values{
		"no token":    {},
		"empty token": {"csrf_token": {""}},
		"bad token":   {"csrf_token": {good + "x"}},
		"other token": {"csrf_token": {strings.Repeat("A", len(good))}},
	} {
		resp, body := e.post(page+"/refresh", form)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "security token") {
			t.Errorf("%s: %d\n%s", name, resp.StatusCode, body)
		}
	}
	// Another browser's token (another session cookie) does not work.
	stranger := &env{t: t, base: e.base, client: &http.Client{CheckRedirect: e.client.CheckRedirect}}
	resp, _ := stranger.post(page+"/refresh", url.Values{"csrf_token": {good}})
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a token without its cookie: %d", resp.StatusCode)
	}
	// A GET of an action's URL does nothing.
	if code, _ := e.get(page + "/refresh"); code != http.StatusMethodNotAllowed && code != http.StatusNotFound {
		t.Errorf("GET of an action: %d", code)
	}
	if got := runs(); got != before {
		t.Fatalf("refused POSTs ran %d refreshes", got-before)
	}
	// The session cookie is HttpOnly and SameSite=Strict.
	resp, err := http.Get(e.base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ck := resp.Header.Get("Set-Cookie")
	if !strings.Contains(ck, "HttpOnly") || !strings.Contains(ck, "SameSite=Strict") {
		t.Fatalf("Set-Cookie: %q", ck)
	}
}

// TestLoopbackOnly: a client from another address, or a page reaching the
// loopback listener under another host name, gets 403 with a clear
// message and nothing runs.
func TestLoopbackOnly(t *testing.T) {
	e := start(t, app.Config{})
	seed(e)
	h := e.srv.ConsoleHandler()
	for _, p := range []string{"/", "/datasets/public/by_region", "/metrics", "/healthz"} {
		r := httptest.NewRequest("GET", "http://127.0.0.1"+p, nil)
		r.RemoteAddr = "192.0.2.10:50000" // a documentation address: no traffic is sent
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "192.0.2.10 is not one") {
			t.Errorf("GET %s from 192.0.2.10: %d %q", p, w.Code, w.Body.String())
		}
	}
	before := e.queryInt(`SELECT count(*) FROM refresh_history`)
	r := httptest.NewRequest("POST", "http://127.0.0.1/datasets/public/by_region/refresh", strings.NewReader("csrf_token=x"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.RemoteAddr = "[2001:db8::1]:50000"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "loopback") {
		t.Errorf("POST from 2001:db8::1: %d %q", w.Code, w.Body.String())
	}
	if after := e.queryInt(`SELECT count(*) FROM refresh_history`); after != before {
		t.Fatalf("a refused POST ran a refresh")
	}
	// DNS rebinding: a loopback client, a foreign host name.
	req, _ := http.NewRequest("GET", e.base+"/", nil)
	req.Host = "attacker.example:8433"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("Host attacker.example: %d", resp.StatusCode)
	}
	// localhost and [::1]-style names are loopback.
	req, _ = http.NewRequest("GET", e.base+"/", nil)
	req.Host = "localhost"
	if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("Host localhost: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()
}
