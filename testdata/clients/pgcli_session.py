#!/usr/bin/python3
"""pgcli session of the client suite (clienttest.TestPgcli).

Run with Debian's interpreter, which has pgcli (and its pgspecial and
psycopg 3):
    /usr/bin/python3 -u pgcli_session.py
The connection comes from PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD
and PGSSLMODE (libpq's environment).

pgcli 3.5 has no non-interactive mode that prints stable output (piped
input goes through its prompt and redraws), so this drives pgcli's own
engine, the one its prompt calls: pgcli.pgexecute.PGExecute runs each
command, handing the backslash commands to pgspecial as pgcli does, and
the rows are printed through cli_helpers' tabular formatter, pgcli's
default ("psql" style). The steps are the backslash commands \\dt, \\df and
\\d (of a table and of a view), and the catalog queries pgcli sends at
connect to fill its completion (schemata, tables, views, columns,
functions, data types, foreign keys, databases).

Every step starts with a line "=== NAME"; an error prints "ERROR
<SQLSTATE>" (compared) and "# <message>" (shown, not compared).
"""
import traceback

from cli_helpers.tabular_output import TabularOutputFormatter
from pgcli.pgexecute import PGExecute
from pgspecial.main import PGSpecial
import psycopg

executor = PGExecute()  # libpq's defaults: the PG* variables
special = PGSpecial()
formatter = TabularOutputFormatter(format_name='psql')


def show(title, rows, headers, status):
    if title:
        print(title)
    if headers:
        rows = list(rows or [])
        for line in formatter.format_output(rows, headers):
            print(line)
    if status:
        print(status)


def report(e):
    """Prints a failed step's error; a server error rolls back."""
    if isinstance(e, psycopg.Error):
        print('ERROR %s' % e.sqlstate)
        print('# ' + ' '.join(str(e).split()))
        executor.conn.rollback()
        return
    print('EXCEPTION %s' % type(e).__name__)
    for line in traceback.format_exception_only(type(e), e):
        print('# ' + ' '.join(line.split())[:300])


def command(cmd):
    print('=== ' + cmd)
    try:
        for title, rows, headers, status, _sql, success, _special in executor.run(
                cmd, pgspecial=special, on_error_resume=True,
                exception_formatter=lambda e: 'ERROR %s' % getattr(e, 'sqlstate', None)):
            show(title, rows, headers, status)
    except Exception as e:
        report(e)


def completion(name, fn):
    """One of the catalog reads pgcli makes to fill its completion."""
    print('=== completion ' + name)
    try:
        rows = sorted(tuple(str(v) for v in r) for r in fn()
                      if str(r[0]) not in ('information_schema', 'system', 'pg_catalog', 'pg_toast'))
        for r in rows:
            print(' '.join(r))
    except Exception as e:
        report(e)


command('CREATE TABLE cli_items (id int PRIMARY KEY, name text NOT NULL, '
        'customer_id int REFERENCES customers(id), qty int CHECK (qty > 0))')
command("CREATE FUNCTION cli_double(x int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT x * 2'")
command(r'\dt')
command(r'\dt reporting.*')
command(r'\df')
command(r'\df cli_*')
command(r'\d orders')
command(r'\d customers')
command(r'\d cli_items')
command(r'\d big_orders')
command(r'\dv')
command(r'\di')
command(r'\dn')
command('SELECT cli_double(21) AS answer')
completion('schemata', lambda: [(s,) for s in executor.schemata()])
completion('tables', executor.tables)
completion('views', executor.views)
completion('table columns', executor.table_columns)
completion('view columns', executor.view_columns)
completion('functions', lambda: [(f.schema_name, f.func_name, f.return_type) for f in executor.functions()])
completion('datatypes', executor.datatypes)
completion('foreign keys', executor.foreignkeys)
completion('search path', lambda: [(s,) for s in executor.search_path()])
