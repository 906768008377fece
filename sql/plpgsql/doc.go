// Package plpgsql runs DO blocks: the part of PL/pgSQL that pg_dump's
// output, migration tools and ORMs send (issue 22). A block is parsed by
// PostgreSQL's own PL/pgSQL parser (libpg_query) into a tree of
// statements (block.go), which Run interprets (run.go): DECLARE with
// defaults, assignments, SQL statements and PERFORM, SELECT … INTO,
// IF/ELSIF/ELSE, LOOP, WHILE, FOR … IN query LOOP, FOR … IN EXECUTE,
// FOR i IN a..b LOOP, EXIT and CONTINUE [label] [WHEN], EXECUTE [INTO
// [STRICT]] [USING] (format() as migration tools build DDL), RAISE
// (NOTICE, WARNING, INFO, EXCEPTION, with USING
// ERRCODE/MESSAGE/DETAIL/HINT), nested and labelled BEGIN … END, RETURN,
// and EXCEPTION WHEN handlers.
//
// Invariants:
//  1. Every SQL statement and expression runs through the Runner the
//     caller gives (the session): the interpreter holds no catalog, plan
//     or storage. Variables are passed as parameters ($n) in the text
//     format, cast to their declared types in the SQL text, so the Runner
//     needs no knowledge of PL/pgSQL.
//  2. A block with an EXCEPTION clause holds at most one statement with
//     effects, which changes no rows: PostgreSQL undoes a failed block
//     through a subtransaction, mvserver has none, and a lone statement
//     that failed left nothing behind. Other such blocks fail with 0A000
//     before anything runs.
//  3. What is not supported (CASE, FOREACH, cursors, GET DIAGNOSTICS, …)
//     fails with 0A000 naming it, before anything runs; an EXIT or
//     CONTINUE that fits no loop or label is 42601, as PostgreSQL's
//     compiler says. An EXECUTE counts for invariant 2 as a statement
//     that may change rows unless its query is a string constant.
//
// Imports: pgerror and sql/parse (tree walking, deparse), never the
// session, the planner or storage.
package plpgsql
