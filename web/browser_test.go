//go:build browser

package web_test

import (
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mvserver/mvserver/app"
)

// The console in a real browser: Debian's headless Chromium, driven with
// chromedp. Run with `go test -tags browser ./web/...`; it fails, it does
// not skip, when Chromium is missing (scripts/install-test-deps.sh installs
// it). Screenshots go to web/testdata/out/ (ignored by git).

// chromium finds Debian's Chromium.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("the browser test needs Chromium: run scripts/install-test-deps.sh (it installs Debian's chromium package)")
	return ""
}

// screenshots is where the test leaves its pictures.
func screenshots(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("testdata", "out")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// shoot saves a full-page screenshot as a PNG.
func shoot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", p)
}

// TestBrowser: overview → a view → its lineage and a history bar →
// Refresh → a new bar → Enable incremental from the banner → the view's
// analysis turns from blocked to incremental.
func TestBrowser(t *testing.T) {
	exe := chromium(t)
	dir := screenshots(t)
	e := start(t, app.Config{})
	for _, q := range []string{
		`CREATE TABLE sales (id INT PRIMARY KEY, region_id INT, amount DECIMAL(10,2), sold_at TIMESTAMP)`,
		`CREATE TABLE regions (id INT PRIMARY KEY, name STRING) TBLPROPERTIES (delta.enableChangeDataFeed = false, delta.enableRowTracking = false)`,
		`INSERT INTO regions VALUES (1, 'north'), (2, 'south'), (3, 'east')`,
		`INSERT INTO sales VALUES (1, 1, 10.00, '2025-01-01 10:00'), (2, 2, 20.50, '2025-01-01 11:00'), (3, 1, 5.25, '2025-01-02 09:30')`,
		`CREATE MATERIALIZED VIEW region_totals SCHEDULE CRON '0 */15 * * * ?' COMMENT 'revenue per region, refreshed every 15 minutes' AS
SELECT r.name AS region, sum(s.amount) AS revenue, count(*) AS orders
FROM sales s
JOIN regions r ON r.id = s.region_id
WHERE s.amount > 0 -- refunds are booked elsewhere
GROUP BY r.name`,
		`CREATE MATERIALIZED VIEW top_regions AS SELECT region, revenue FROM region_totals WHERE revenue > 10`,
		`CREATE MATERIALIZED VIEW daily_sales TRIGGER ON UPDATE AS SELECT date_trunc('day', sold_at) AS day, sum(amount) AS revenue FROM sales GROUP BY 1`,
		`CREATE STREAMING TABLE sales_log AS SELECT id, amount FROM STREAM(sales)`,
		`INSERT INTO sales VALUES (4, 3, 7.00, '2025-01-02 12:00')`,
		`REFRESH MATERIALIZED VIEW region_totals`,
	} {
		e.exec(q)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1360, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancelCtx := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	defer cancelCtx()
	// The first Run starts the browser; only later steps get deadlines.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start Chromium (%s): %v", exe, err)
	}
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := chromedp.Do(sctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	count := func(sel string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+strconv.Quote(sel)+`).length`))
		if err != nil {
			t.Fatalf("count %s: %v", sel, err)
		}
		return n
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return strings.TrimSpace(s)
	}
	// waitFor evaluates expr until it is true on a page that has finished
	// loading; a page being replaced (a form's POST and its redirect) only
	// makes it try again. A screenshot of a page still loading has no
	// width, so the page must be complete, not only show the element.
	waitFor := func(what, expr string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		var last error
		for time.Now().Before(deadline) {
			ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.readyState === "complete" && (`+expr+`)`))
			if err == nil && ok {
				return
			}
			last = err
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("%s: not within the deadline (last error %v)", what, last)
	}

	// The overview lists every dataset, with the banner.
	do("open the overview", chromedp.Navigate(e.base+"/"), chromedp.WaitVisible(chromedp.CSS(`#datasets`)))
	shoot(t, ctx, dir, "overview.png")
	if n := count(`#datasets tbody tr`); n != 4 {
		t.Fatalf("the overview lists %d datasets, want 4", n)
	}
	if !strings.Contains(text(`#insights`), "public.region_totals") {
		t.Fatalf("the banner does not offer region_totals: %q", text(`#insights`))
	}
	// Typing filters at once.
	do("type a filter", chromedp.SendKeys(chromedp.CSS(`input[name=q]`), "region"))
	if n := count(`#datasets tbody tr:not([hidden])`); n != 2 {
		t.Fatalf("typing 'region' leaves %d rows, want 2", n)
	}

	// A view: lineage both ways and the history chart.
	do("open region_totals",
		chromedp.Click(chromedp.CSS(`a[href="/datasets/public/region_totals"]`)),
		chromedp.WaitVisible(chromedp.CSS(`svg.lineage`)))
	if nodes, links := count(`svg.lineage g.node`), count(`svg.lineage a.node-link`); nodes != 4 || links != 1 {
		t.Fatalf("lineage: %d nodes, %d links; want sales, regions, region_totals and top_regions, with one link", nodes, links)
	}
	before := count(`svg.chart rect.bar`)
	if before != 2 {
		t.Fatalf("%d history bars, want 2 (CREATE and the manual refresh)", before)
	}
	shoot(t, ctx, dir, "dataset.png")

	// Refresh, confirmed in its dialog: a new bar.
	e.exec(`INSERT INTO sales VALUES (5, 2, 3.00, '2025-01-03 08:00')`)
	do("open Refresh's dialog",
		chromedp.Click(chromedp.CSS(`button[data-dialog="confirm-refresh"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#confirm-refresh`)))
	shoot(t, ctx, dir, "confirm-refresh.png")
	do("confirm Refresh", chromedp.Click(chromedp.CSS(`#confirm-refresh button[data-confirm="refresh"]`)))
	waitFor("a new bar", `document.querySelectorAll("svg.chart rect.bar").length > `+strconv.Itoa(before)+
		` && document.querySelector("#actions .action.ok") !== null`)

	// Enable incremental from the banner: the dialog lists the table, and
	// the view's analysis changes.
	if b := text(`#analysis .badge`); b != "blocked" {
		t.Fatalf("before Enable the analysis says %q, want blocked", b)
	}
	do("open the banner's dialog",
		chromedp.Click(chromedp.CSS(`#insights button[data-dialog]`)),
		chromedp.WaitVisible(chromedp.CSS(`#insights dialog[open]`)))
	shoot(t, ctx, dir, "enable-incremental.png")
	if d := text(`#insights dialog[open] table.changes`); !strings.Contains(d, "public.regions") || strings.Contains(d, "public.sales") {
		t.Fatalf("the dialog lists %q, want public.regions only", d)
	}
	do("confirm Enable", chromedp.Click(chromedp.CSS(`#insights dialog[open] button.primary`)))
	waitFor("the analysis turns incremental", `document.querySelector("#analysis .badge") !== null && document.querySelector("#analysis .badge").textContent === "incremental" && document.getElementById("insights") === null`)
	shoot(t, ctx, dir, "after-enable.png")
	// One more change and Refresh: the history grows by a bar.
	e.exec(`INSERT INTO sales VALUES (6, 3, 12.00, '2025-01-03 09:00')`)
	bars := count(`svg.chart rect.bar`)
	do("Refresh again",
		chromedp.Click(chromedp.CSS(`button[data-dialog="confirm-refresh"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#confirm-refresh`)),
		chromedp.Click(chromedp.CSS(`#confirm-refresh button[data-confirm="refresh"]`)))
	waitFor("another bar", `document.querySelectorAll("svg.chart rect.bar").length > `+strconv.Itoa(bars))
	shoot(t, ctx, dir, "dataset-after.png")
	// The picture of the dataset page the README shows: from the top to
	// the end of the run history.
	bottom, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.getElementById("history").getBoundingClientRect().bottom + window.scrollY + 16`))
	if err != nil {
		t.Fatal(err)
	}
	crop(t, filepath.Join(dir, "dataset-after.png"), filepath.Join(dir, "console-dataset.png"), int(bottom))
	var k, v string
	if err := e.sql.QueryRow(t.Context(), `SHOW TBLPROPERTIES regions (delta.enableChangeDataFeed)`).Scan(&k, &v); err != nil || v != "true" {
		t.Fatalf("regions' change data feed: %q %v", v, err)
	}
}

// crop keeps the top height pixels of a PNG.
func crop(t *testing.T, from, to string, height int) {
	t.Helper()
	f, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	if height > b.Dy() {
		height = b.Dy()
	}
	sub := img.(interface {
		SubImage(image.Rectangle) image.Image
	}).SubImage(image.Rect(b.Min.X, b.Min.Y, b.Max.X, b.Min.Y+height))
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(out, sub); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", to)
}
