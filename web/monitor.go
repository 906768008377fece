package web

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/storage"
)

// Monitor hears what the server does — refresh runs (refresh.Runner.OnRun),
// refresh results, connections and queries (InstrumentEngine) — and keeps
// the Prometheus metrics (R-O4) and the set of refreshes running now, which
// the console's pages show.
type Monitor struct {
	reg *prometheus.Registry

	refreshes     *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	running       prometheus.Gauge
	rowsRead      *prometheus.CounterVec
	rowsWritten   *prometheus.CounterVec
	connections   prometheus.Gauge
	connectsTotal prometheus.Counter
	queries       *prometheus.CounterVec

	mu   sync.Mutex
	runs map[uint32]RunningRefresh
}

// RunningRefresh is a refresh in progress.
type RunningRefresh struct {
	Start time.Time
	Cause string
}

// noTechnique labels runs that failed before a technique was chosen.
const noTechnique refresh.TechniqueName = "NONE"

// walSyncBuckets are the upper bounds (seconds) /metrics gives the WAL
// fsync histogram.
var walSyncBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// NewMonitor creates the metrics. walSync, when set, reads the storage's
// WAL fsync latencies at each scrape (storage.DB.WALSyncLatency).
func NewMonitor(walSync func() storage.LatencyHistogram) *Monitor {
	m := &Monitor{reg: prometheus.NewRegistry(), runs: map[uint32]RunningRefresh{}}
	m.refreshes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mvserver_refreshes_total",
		Help: "Refresh runs of materialized views and streaming tables (manual, scheduled, triggered; not the first refresh inside CREATE), by technique and final status (COMPLETED, FAILED, CANCELED, TIMED_OUT). A run that failed before planning has technique NONE.",
	}, []string{"technique", "status"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "mvserver_refresh_duration_seconds",
		Help:    "Wall time of refresh runs, from taking the view's lock to the end of the commit, by technique.",
		Buckets: []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600},
	}, []string{"technique"})
	m.running = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mvserver_refreshes_running",
		Help: "Refresh runs in progress.",
	})
	m.rowsRead = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mvserver_refresh_rows_read_total",
		Help: "Source rows (or changes) read by completed refresh runs, by technique.",
	}, []string{"technique"})
	m.rowsWritten = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mvserver_refresh_rows_written_total",
		Help: "Rows written to views by completed refresh runs, by technique.",
	}, []string{"technique"})
	m.connections = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mvserver_connections",
		Help: "Open SQL sessions (wire connections past authentication, and the console's internal sessions).",
	})
	m.connectsTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "mvserver_connections_total",
		Help: "SQL sessions opened since start.",
	})
	m.queries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mvserver_queries_total",
		Help: "Queries run: simple-protocol Query messages and extended-protocol Executes, by protocol and result (ok, error).",
	}, []string{"protocol", "result"})
	m.reg.MustRegister(m.refreshes, m.duration, m.running, m.rowsRead, m.rowsWritten, m.connections, m.connectsTotal, m.queries,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "mvserver_scan_readahead_total",
			Help: "Table scans long enough to read and decode their rows on a second core while the query (or refresh) works on the rows already read.",
		}, func() float64 { return float64(exec.ReadaheadScans()) }))
	if walSync != nil {
		m.reg.MustRegister(&walSyncCollector{read: walSync, desc: prometheus.NewDesc("mvserver_commit_wal_fsync_seconds",
			"Latency of the write-ahead log's fsyncs: the part of a commit spent making it durable, which every COMMIT waits for.", nil, nil)})
	}
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Monitor) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// OnRun is the refresh.Runner.OnRun hook: it counts finished runs by
// technique and status, and tracks the running ones.
func (m *Monitor) OnRun(ev refresh.RunEvent) {
	switch ev.Kind {
	case "start":
		m.mu.Lock()
		if _, ok := m.runs[ev.View]; !ok {
			m.running.Inc()
		}
		m.runs[ev.View] = RunningRefresh{Start: time.Now(), Cause: ev.Cause}
		m.mu.Unlock()
	case "success", "failure":
		m.mu.Lock()
		if _, ok := m.runs[ev.View]; ok {
			delete(m.runs, ev.View)
			m.running.Dec()
		}
		m.mu.Unlock()
		tech := ev.Technique
		if tech == "" {
			tech = noTechnique
		}
		m.refreshes.WithLabelValues(string(tech), ev.Status).Inc()
		m.duration.WithLabelValues(string(tech)).Observe(ev.Duration.Seconds())
	}
}

// OnResult counts the rows a completed refresh read and wrote.
func (m *Monitor) OnResult(res *refresh.Result) {
	if res == nil {
		return
	}
	m.rowsRead.WithLabelValues(string(res.Technique)).Add(float64(res.Stats.RowsRead))
	m.rowsWritten.WithLabelValues(string(res.Technique)).Add(float64(res.Stats.RowsWritten))
}

// Running reports whether a refresh of view is in progress.
func (m *Monitor) Running(view uint32) (RunningRefresh, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[view]
	return r, ok
}

// walSyncCollector turns the storage's WAL fsync histogram into seconds at
// each scrape.
type walSyncCollector struct {
	read func() storage.LatencyHistogram
	desc *prometheus.Desc
}

func (c *walSyncCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *walSyncCollector) Collect(ch chan<- prometheus.Metric) {
	h := c.read()
	buckets := make(map[float64]uint64, len(walSyncBuckets))
	for _, ub := range walSyncBuckets {
		// The count of the finest storage bucket within ub: storage
		// buckets are much finer than these.
		var n uint64
		for _, b := range h.Buckets {
			if b.UpperBound.Seconds() <= ub {
				n = b.Count
			}
		}
		buckets[ub] = n
	}
	ch <- prometheus.MustNewConstHistogram(c.desc, h.Count, h.Sum.Seconds(), buckets)
}
