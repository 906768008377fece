#!/usr/bin/python3
"""SQLAlchemy and pandas session of the client suite (clienttest.TestSQLAlchemy).

Run with Debian's interpreter, which has python3-sqlalchemy, python3-pandas
and python3-psycopg2:
    /usr/bin/python3 -u sqlalchemy_session.py
The engine's URL is "postgresql+psycopg2://" with nothing else: libpq takes
the connection from PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD and
PGSSLMODE.

What a BI tool or a notebook does first: reflect the whole schema
(MetaData.reflect of every table and view, with columns, types, primary
keys, foreign keys, indexes, unique constraints and comments), then read a
table into a DataFrame (read_sql_table) and write one back, replacing the
table (to_sql with if_exists='replace').

Every step starts with a line "=== NAME" and runs on its own: an error
prints "ERROR <SQLSTATE>" (compared) and "# <message>" (shown, not
compared).
"""
import traceback

import pandas as pd
import sqlalchemy as sa

engine = sa.create_engine('postgresql+psycopg2://')


def step(fn):
    print('=== ' + fn.__doc__.strip())
    try:
        fn()
    except sa.exc.DBAPIError as e:
        print('ERROR %s' % getattr(e.orig, 'pgcode', None))
        print('# ' + ' '.join(str(e.orig).split()))
    except Exception as e:  # a client-side failure: show it, go on
        print('EXCEPTION %s' % type(e).__name__)
        for line in traceback.format_exception_only(type(e), e):
            print('# ' + ' '.join(line.split())[:300])
    return fn


def show_table(t):
    print('table %s' % t.fullname)
    for c in t.columns:
        print('  column %s %s nullable=%s pk=%s default=%s comment=%s' % (
            c.name, c.type, c.nullable, c.primary_key,
            c.server_default.arg if c.server_default is not None else None,
            c.comment))
    if t.comment:
        print('  comment %s' % t.comment)
    print('  primary key %s %s' % (t.primary_key.name,
                                   [c.name for c in t.primary_key.columns]))
    for fk in sorted(t.foreign_key_constraints, key=lambda f: f.name or ''):
        print('  foreign key %s %s -> %s ondelete=%s' % (
            fk.name, [c.name for c in fk.columns],
            [e.target_fullname for e in fk.elements], fk.ondelete))
    for ix in sorted(t.indexes, key=lambda i: i.name):
        print('  index %s %s unique=%s' % (ix.name, [c.name for c in ix.columns], ix.unique))
    for uc in sorted((c for c in t.constraints if isinstance(c, sa.UniqueConstraint)),
                     key=lambda c: c.name or ''):
        print('  unique %s %s' % (uc.name, [c.name for c in uc.columns]))
    for cc in sorted((c for c in t.constraints if isinstance(c, sa.CheckConstraint)),
                     key=lambda c: c.name or ''):
        print('  check %s' % cc.name)
        print_check_text(cc.sqltext)


def print_check_text(text):
    # Compared: mvserver prints a CHECK condition as PostgreSQL prints its
    # analyzed tree, with the implicit casts it added ("price >=
    # (0)::numeric", a varchar IN list as = ANY (ARRAY[...]::text[])).
    print('check text: %s' % text)


@step
def schema():
    """schema"""
    # A schema of its own, with a foreign key and a check, for reflection.
    with engine.begin() as c:
        c.exec_driver_sql('DROP TABLE IF EXISTS sa_line')
        c.exec_driver_sql('DROP TABLE IF EXISTS sa_item')
        c.exec_driver_sql(
            'CREATE TABLE sa_item (id int PRIMARY KEY, sku varchar(20) NOT NULL UNIQUE, '
            'price numeric(8,2) CHECK (price >= 0), added date, '
            "status varchar(10) CHECK (status IN ('new', 'done')))")
        c.exec_driver_sql(
            'CREATE TABLE sa_line (item_id int NOT NULL REFERENCES sa_item(id) ON DELETE CASCADE, '
            'qty int NOT NULL DEFAULT 1, PRIMARY KEY (item_id, qty))')
        c.exec_driver_sql("INSERT INTO sa_item VALUES (1, 'a-1', 2.50, '2024-01-01', 'new'), (2, 'b-2', 0, NULL, NULL)")
        c.exec_driver_sql('INSERT INTO sa_line VALUES (1, 3), (2, 1)')
    print('created')


@step
def inspector_names():
    """inspector names"""
    insp = sa.inspect(engine)
    print('schemas', [s for s in insp.get_schema_names() if not s.startswith('pg_')
                      and s not in ('information_schema', 'mvserver')])
    print('tables', sorted(insp.get_table_names()))
    print('views', sorted(insp.get_view_names()))
    print('materialized views', sorted(insp.get_materialized_view_names())
          if hasattr(insp, 'get_materialized_view_names') else sorted(insp.get_view_names(include='materialized')))


@step
def reflect_all():
    """MetaData.reflect(views=True)"""
    md = sa.MetaData()
    md.reflect(bind=engine, views=True)
    for name in sorted(md.tables):
        show_table(md.tables[name])


@step
def reflect_schema():
    """MetaData.reflect(schema=reporting)"""
    md = sa.MetaData()
    md.reflect(bind=engine, schema='reporting', views=True)
    print(sorted(md.tables))


@step
def inspector_details():
    """inspector details of sa_line"""
    insp = sa.inspect(engine)
    print('pk', insp.get_pk_constraint('sa_line'))
    for fk in insp.get_foreign_keys('sa_line'):
        print('fk', sorted(fk.items()))
    for cc in insp.get_check_constraints('sa_item'):
        print('check', cc['name'])
        print_check_text(cc['sqltext'])
    print('uniques', insp.get_unique_constraints('sa_item'))
    print('indexes', sorted((i['name'], i['column_names'], i['unique']) for i in insp.get_indexes('orders')))
    print('comment', insp.get_table_comment('customers'))
    print('view definition', ' '.join((insp.get_view_definition('big_orders') or '').split()) != '')


@step
def read_sql_table():
    """pandas read_sql_table(orders)"""
    df = pd.read_sql_table('orders', engine)
    print(df.dtypes.to_string())
    print(df.sort_values('order_id').to_string(index=False))


@step
def read_sql_table_view():
    """pandas read_sql_table(sales_by_customer)"""
    df = pd.read_sql_table('sales_by_customer', engine)
    print(df.sort_values('customer_id').to_string(index=False))


@step
def read_sql_query():
    """pandas read_sql_query with a parameter"""
    df = pd.read_sql_query(sa.text('SELECT id, name FROM customers WHERE id >= :lo ORDER BY id'),
                           engine, params={'lo': 2})
    print(df.to_string(index=False))


@step
def to_sql_replace():
    """pandas to_sql(if_exists=replace)"""
    df = pd.DataFrame({
        'id': [1, 2, 3],
        'label': ['one', 'two', None],
        'score': [1.5, 2.25, None],
        'flag': [True, False, True],
        'at': pd.to_datetime(['2024-01-01 10:00', '2024-02-01 11:30', '2024-03-01 00:00']),
    })
    for _ in range(2):  # the second one replaces the table the first made
        n = df.to_sql('pd_scores', engine, if_exists='replace', index=False)
        print('wrote', n)
    back = pd.read_sql_table('pd_scores', engine)
    print(back.dtypes.to_string())
    print(back.sort_values('id').to_string(index=False))


@step
def to_sql_append():
    """pandas to_sql(if_exists=append) with an index"""
    df = pd.DataFrame({'label': ['four']}, index=pd.Index([4], name='id'))
    df.to_sql('pd_scores2', engine, if_exists='replace')
    df.to_sql('pd_scores2', engine, if_exists='append')
    with engine.connect() as c:
        print(c.exec_driver_sql('SELECT count(*) FROM pd_scores2').scalar())
    insp = sa.inspect(engine)
    print('indexes', sorted((i['name'], i['column_names']) for i in insp.get_indexes('pd_scores2')))


@step
def orm_core_roundtrip():
    """Table.create and insert through SQLAlchemy Core"""
    md = sa.MetaData()
    t = sa.Table('sa_core', md,
                 sa.Column('id', sa.Integer, primary_key=True, autoincrement=False),
                 sa.Column('item_id', sa.Integer, sa.ForeignKey('sa_item.id')),
                 sa.Column('note', sa.String(40), server_default='none'))
    md.drop_all(engine)
    md.create_all(engine)
    with engine.begin() as c:
        c.execute(t.insert(), [{'id': 1, 'item_id': 1}, {'id': 2, 'item_id': 2, 'note': 'x'}])
        print(c.execute(sa.select(t).order_by(t.c.id)).fetchall())
    md.drop_all(engine)
    print('dropped', not sa.inspect(engine).has_table('sa_core'))
