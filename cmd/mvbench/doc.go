// Command mvbench measures mvserver end to end, and PostgreSQL beside it:
// for each workload (W1 the seed's transaction_summary aggregate, W2 the
// orders ⋈ products join view, W3 a latest-row-per-account window view,
// W4 a per-minute metrics view over the last hour) it loads N rows with
// COPY, creates the materialized view and a unique index on its key (on
// both systems; point reads use it), measures DML with the view absent
// and present, point reads of the view from 2 and 16 clients, and for each
// change size d: d inserts, then a mix of d updates and deletes, each
// followed by REFRESH (incremental on mvserver, the technique printed) and
// a full refresh. With --pg the same phases run on PostgreSQL (REFRESH
// MATERIALIZED VIEW and REFRESH … CONCURRENTLY, over that unique index)
// and every row of the table gets the ratio mvserver / PostgreSQL.
// With --alternatives (default on) mvserver also keeps an INCREMENTAL
// STRICT twin of the view and times its refresh after each change, so
// every refresh is set against the technique the cost model did not
// choose (the view's REFRESH … FULL when it went incremental, the twin's
// incremental refresh when it went full): a target row and a "cost model"
// line say how often the chosen one was slower, with the estimates that
// planning_information recorded (also in --json, per refresh).
//
// Workload T, derived from TPC-H (tpch*.go), is separate: it generates
// the specification's eight tables at --sf by the rules of its clause 4.2
// (tpch_gen.go says where and why the generator departs from dbgen),
// loads them with COPY, adds the same secondary indexes on both systems,
// runs the 22 queries with their validation parameters as SELECT and as
// CREATE MATERIALIZED VIEW, and compares each answer with PostgreSQL's by
// fingerprint (tpch_fingerprint.go). With --refresh, RF1, RF2 and an
// UPDATE batch each precede a REFRESH of every view (mvserver: incremental
// where it can, the technique printed, then REFRESH … FULL). Every
// statement runs under statement_timeout = --query-timeout; a timeout or
// a statement mvserver rejects is reported and the run goes on.
//
//	go run ./cmd/mvbench --workloads T --sf 0.1 --query-timeout 120s --refresh \
//	    --pg 'postgres://postgres@127.0.0.1:5432/bench?sslmode=disable'
//
//	go run ./cmd/mvbench --rows 100000 --changes 1,1000,10000
//	go run ./cmd/mvbench --rows 1000000 --workloads W1,W2 \
//	    --pg 'postgres://postgres@127.0.0.1:5432/bench?sslmode=disable' --json out.json
//
// mvbench starts mvserver in its own process (app.Start, a temporary data
// directory, a loopback port) unless --mv names a running server. On every
// server it is given it works in the schema mvbench, which it drops and
// recreates: point it at a database where that schema holds nothing of
// value. --store picks the in-process server's storage engine; a comma
// list (--store pebble,tikvmock://, a build with -tags tikv) runs
// everything once per engine, each beside PostgreSQL as usual, and then
// prints every mvserver measurement of the later engines beside the
// first's, with their ratio and a geometric mean per workload
// (stores.go).
//
// The numbers are measured, never assumed: a run prints what it measured
// on this machine, and --json writes every measurement. After incremental
// refreshes (--check) the tool compares the view with its query on the same
// snapshot and fails if they differ, so a fast wrong answer never becomes a
// number.
//
// Imports: app only (the in-process server); nothing imports it.
package main
