#!/usr/bin/python3
"""psycopg2 session of the client suite (clienttest.TestPsycopg2).

Run with Debian's interpreter, which has python3-psycopg2:
    /usr/bin/python3 -u psycopg2_session.py
libpq takes the connection from PGHOST, PGPORT, PGDATABASE, PGUSER,
PGPASSWORD and PGSSLMODE. psycopg2 interpolates parameters on the client
and speaks the simple query protocol only; autocommit is off, so the first
statement of each transaction is preceded by BEGIN.

Every step starts with a line "=== NAME" and runs on its own: an error
prints "ERROR <SQLSTATE>" (compared) and "# <message>" (shown, not
compared), the transaction is rolled back (or the connection reopened) and
the next step goes on.
"""
import datetime
import decimal
import io
import traceback

import psycopg2
import psycopg2.extras

conn = None


def connect():
    return psycopg2.connect('')  # everything from the PG* variables


def step(fn):
    global conn
    print('=== ' + fn.__doc__.strip())
    try:
        fn()
    except psycopg2.Error as e:
        print('ERROR %s' % e.pgcode)
        print('# ' + ' '.join(str(e).split()))
        recover()
    except Exception as e:  # a driver-side failure: show it, go on
        print('EXCEPTION %s' % type(e).__name__)
        for line in traceback.format_exception_only(type(e), e):
            print('# ' + ' '.join(line.split()))
        recover()
    return fn


def recover():
    global conn
    try:
        if conn is not None and not conn.closed:
            conn.rollback()
            conn.autocommit = False
            return
    except psycopg2.Error as e:
        print('# recover: ' + ' '.join(str(e).split()))
    try:
        conn = connect()
        print('# reconnected')
    except psycopg2.Error as e:
        print('# reconnect failed: ' + ' '.join(str(e).split()))


def show(rows):
    for r in rows:
        print(repr(r))


def orders():
    with conn.cursor() as c:
        c.execute('SELECT order_id, customer_id, amount, ordered_at, note FROM orders ORDER BY order_id')
        show(c.fetchall())


@step
def connect_step():
    """connect"""
    global conn
    conn = connect()
    print('encoding', conn.encoding, 'DateStyle', conn.get_parameter_status('DateStyle'),
          'TimeZone', conn.get_parameter_status('TimeZone'),
          'integer_datetimes', conn.get_parameter_status('integer_datetimes'),
          'standard_conforming_strings', conn.get_parameter_status('standard_conforming_strings'))
    print('# server_version', conn.server_version, conn.get_parameter_status('server_version'))
    print('protocol', conn.protocol_version, 'ssl_in_use', conn.info.ssl_in_use,
          'status', conn.status, 'autocommit', conn.autocommit)
    if conn.info.ssl_in_use:
        print('# ssl', conn.info.ssl_attribute('protocol'), conn.info.ssl_attribute('cipher'))


@step
def parameters():
    """parameters (int, text with a quote, timestamp, numeric, None, bool, list)"""
    with conn.cursor() as c:
        c.execute('SELECT order_id, amount, ordered_at FROM orders WHERE customer_id = %s AND note IS DISTINCT FROM %s '
                  'AND ordered_at > %s AND amount >= %s AND %s IS NULL AND %s AND order_id = ANY(%s) ORDER BY order_id',
                  (1, "it's", datetime.datetime(2023, 12, 31, 0, 0), decimal.Decimal('1.50'), None, True, [1, 2, 3]))
        show(c.fetchall())
        print([(d.name, d.type_code) for d in c.description])
    conn.commit()


@step
def named_parameters():
    """named parameters (dict)"""
    with conn.cursor() as c:
        c.execute('SELECT %(name)s::text AS n, %(when)s AS w, %(d)s AS d, %(ts)s AS ts',
                  {'name': 'x', 'when': datetime.date(2024, 1, 2), 'd': 2.5,
                   'ts': datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)})
        show(c.fetchall())
        print([(d.name, d.type_code) for d in c.description])
    conn.commit()


@step
def typed_results():
    """result types"""
    with conn.cursor() as c:
        c.execute('SELECT id, name, email, created_at FROM customers ORDER BY id')
        show(c.fetchall())
        print([(d.name, d.type_code) for d in c.description])
        c.execute('SELECT 1::int2, 2::int8, 1.5::float8, 2.25::numeric(5,2), true, NULL::text, '
                  "'2024-01-02'::date, '1 day 02:03:04'::interval")
        show(c.fetchall())
    conn.commit()


@step
def executemany():
    """executemany INSERT, then rollback"""
    with conn.cursor() as c:
        c.executemany('INSERT INTO orders(order_id, customer_id, amount, ordered_at, note) VALUES (%s, %s, %s, %s, %s)',
                      [(100 + i, 1, decimal.Decimal('1.00') * i, datetime.datetime(2024, 2, i, 9, 30), 'many %d' % i)
                       for i in range(1, 4)])
        print('rowcount', c.rowcount)
    orders()
    conn.rollback()
    orders()


@step
def execute_values():
    """execute_values INSERT, then commit, then DELETE"""
    with conn.cursor() as c:
        psycopg2.extras.execute_values(c, 'INSERT INTO orders(order_id, customer_id, amount) VALUES %s',
                                       [(300, 1, decimal.Decimal('9.99')), (301, 2, None)])
        print('rowcount', c.rowcount)
    conn.commit()
    orders()
    with conn.cursor() as c:
        c.execute('DELETE FROM orders WHERE order_id >= %s', (300,))
        print('deleted', c.rowcount)
    conn.commit()


@step
def copy_from():
    """copy_expert COPY ... FROM STDIN (csv), then rollback"""
    data = io.StringIO('200,1,3.50,2024-03-01 10:00:00,copied\n'
                       '201,2,4.50,2024-03-02 11:00:00,"with, comma"\n'
                       '202,3,,,\n')
    with conn.cursor() as c:
        c.copy_expert('COPY orders FROM STDIN WITH (FORMAT csv)', data)
        print('copied', c.rowcount)
    orders()
    conn.rollback()
    orders()


@step
def copy_from_text():
    """copy_from (text format), then commit, then DELETE"""
    data = io.StringIO('210\t1\t7.00\t2024-03-05 08:00:00\ttab\\tseparated\n211\t2\t\\N\t\\N\t\\N\n')
    with conn.cursor() as c:
        c.copy_from(data, 'orders', columns=('order_id', 'customer_id', 'amount', 'ordered_at', 'note'))
        print('copied', c.rowcount)
    conn.commit()
    orders()
    with conn.cursor() as c:
        c.execute('DELETE FROM orders WHERE order_id >= 200')
        print('deleted', c.rowcount)
    conn.commit()


@step
def copy_to():
    """copy_expert COPY (SELECT ...) TO STDOUT (csv, header)"""
    out = io.StringIO()
    with conn.cursor() as c:
        c.copy_expert('COPY (SELECT * FROM orders ORDER BY order_id) TO STDOUT WITH (FORMAT csv, HEADER)', out)
        print('rowcount', c.rowcount)
    print(out.getvalue(), end='')
    conn.commit()


@step
def copy_to_text():
    """copy_to (text format) of a table"""
    out = io.StringIO()
    with conn.cursor() as c:
        c.copy_to(out, 'customers')
    print(''.join(sorted(out.getvalue().splitlines(keepends=True))), end='')
    conn.commit()


@step
def transaction_commit_rollback():
    """transactions: commit and rollback"""
    with conn.cursor() as c:
        c.execute("INSERT INTO customers VALUES (10, 'dave', NULL, '2024-05-01 00:00:00+00')")
        print('status in a transaction', conn.info.transaction_status)
        conn.rollback()
        c.execute('SELECT count(*) FROM customers')
        print('after rollback', c.fetchone())
        c.execute("INSERT INTO customers VALUES (11, 'erin', NULL, '2024-05-02 00:00:00+00')")
        conn.commit()
        c.execute('SELECT count(*) FROM customers')
        print('after commit', c.fetchone())
        c.execute('DELETE FROM customers WHERE id = 11')
        conn.commit()


@step
def transaction_error():
    """transactions: an error rolls back the with-block"""
    try:
        with conn:
            with conn.cursor() as c:
                c.execute("INSERT INTO customers VALUES (12, 'frank', NULL, '2024-05-03 00:00:00+00')")
                c.execute('SELECT 1/0')
    except psycopg2.Error as e:
        print('expected error', e.pgcode)
    with conn.cursor() as c:
        c.execute('SELECT count(*) FROM customers')
        print('after', c.fetchone())
    conn.commit()


@step
def named_cursor():
    """named (server-side) cursor: DECLARE, FETCH FORWARD 2, CLOSE"""
    with conn.cursor(name='srv') as sc:
        sc.itersize = 2
        sc.execute('SELECT id, name FROM customers ORDER BY id')
        print('fetchmany(2)', sc.fetchmany(2))
        print('fetchone', sc.fetchone())
        print('rest', sc.fetchall())
    conn.commit()


@step
def named_cursor_iter():
    """named cursor iterated (itersize 3)"""
    with conn.cursor(name='srv_iter') as sc:
        sc.itersize = 3
        sc.execute('SELECT order_id, amount FROM orders ORDER BY order_id')
        for row in sc:
            print(repr(row))
    conn.commit()


@step
def set_session():
    """set_session(SERIALIZABLE, readonly) + query + a write"""
    conn.set_session(isolation_level='SERIALIZABLE', readonly=True)
    try:
        with conn.cursor() as c:
            c.execute('SELECT count(*) FROM customers')
            print(c.fetchone())
            conn.commit()
            try:
                c.execute("INSERT INTO customers VALUES (13, 'gus', NULL, '2024-05-04 00:00:00+00')")
                print('write allowed')
            except psycopg2.Error as e:
                print('read-only error', e.pgcode)
            conn.rollback()
    finally:
        conn.set_session(isolation_level='DEFAULT', readonly='DEFAULT')


@step
def autocommit():
    """autocommit: no BEGIN"""
    conn.autocommit = True
    try:
        with conn.cursor() as c:
            c.execute('SELECT now() IS NOT NULL')
            print(c.fetchone())
            c.execute("UPDATE customers SET name = name WHERE id = 1")
            print('updated', c.rowcount)
            print('transaction status', conn.info.transaction_status)
    finally:
        conn.autocommit = False


@step
def returning():
    """INSERT ... RETURNING, then rollback"""
    with conn.cursor() as c:
        c.execute("INSERT INTO customers(id, name, created_at) VALUES (%s, %s, %s) RETURNING id, name",
                  (14, 'hal', datetime.datetime(2024, 5, 5, tzinfo=datetime.timezone.utc)))
        print(c.fetchone())
    conn.rollback()


@step
def matview_in_transaction():
    """REFRESH MATERIALIZED VIEW in psycopg2's default transaction: COMMIT keeps it, ROLLBACK restores the old content"""
    with conn.cursor() as c:
        c.execute('CREATE TABLE mv_src (id int PRIMARY KEY, g int)')
        c.execute('INSERT INTO mv_src VALUES (1, 1), (2, 1)')
        c.execute('CREATE MATERIALIZED VIEW mv_per_g AS SELECT g, count(*) AS n FROM mv_src GROUP BY g')
        c.execute('INSERT INTO mv_src VALUES (3, 2)')
        c.execute('REFRESH MATERIALIZED VIEW mv_per_g')
        print('transaction status', conn.info.transaction_status)
        conn.commit()
        c.execute('SELECT g, n FROM mv_per_g ORDER BY g')
        show(c.fetchall())
        c.execute('INSERT INTO mv_src VALUES (4, 3)')
        c.execute('REFRESH MATERIALIZED VIEW mv_per_g')
        c.execute('SELECT g, n FROM mv_per_g ORDER BY g')
        show(c.fetchall())
        conn.rollback()
        c.execute('SELECT g, n FROM mv_per_g ORDER BY g')
        show(c.fetchall())
        c.execute('REFRESH MATERIALIZED VIEW mv_per_g WITH NO DATA')
        conn.commit()
    with conn.cursor() as c:
        try:
            c.execute('SELECT * FROM mv_per_g')
        except psycopg2.Error as e:
            print('ERROR %s' % e.pgcode)
            conn.rollback()
        c.execute('DROP MATERIALIZED VIEW mv_per_g')
        c.execute('DROP TABLE mv_src')
        conn.commit()


@step
def json_values():
    """json and jsonb: parameters, operators, build functions"""
    with conn.cursor() as c:
        c.execute("SELECT %s::jsonb ->> 'a', %s::json -> 'b', jsonb_build_object('k', 1, 'l', 'x')",
                  (psycopg2.extras.Json({'a': 'x'}), '{"b": [1, 2]}'))
        show(c.fetchall())
        try:
            c.execute("SELECT 'not json'::jsonb")
        except psycopg2.Error as e:
            print('ERROR %s' % e.pgcode)
    conn.rollback()


@step
def close():
    """close"""
    conn.close()
    print('closed', conn.closed)
