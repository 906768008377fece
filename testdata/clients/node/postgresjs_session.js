// postgres.js session of the client suite (clienttest.TestPostgresJS).
//
//   cd testdata/clients/node && npm ci && node postgresjs_session.js
//
// The connection comes from PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD
// and PGSSLMODE. postgres.js prepares every tagged-template query
// (extended protocol, parameter types from the server's ParameterDescription),
// asks for binary results of the types it knows, and fetches pg_type's
// array types at connect. The steps: parameters of several types, sql.json
// (a json parameter, OID 114) and jsonb both ways, dynamic identifiers and
// inserts of objects (sql(...)), transactions with savepoint-free
// rollbacks, cursors, unsafe (simple protocol) multi-statement strings,
// pipelined queries and errors.
//
// Every step starts with a line "=== NAME" and runs on its own: an error
// prints "ERROR <SQLSTATE>" (compared) and "# <message>" (shown, not
// compared).
const postgres = require('postgres');
const { oneLine, step } = require('./steps');

const sql = postgres({
  host: process.env.PGHOST, port: parseInt(process.env.PGPORT, 10), database: process.env.PGDATABASE,
  username: process.env.PGUSER, password: process.env.PGPASSWORD || '',
  ssl: process.env.PGSSLMODE === 'require' ? { rejectUnauthorized: false } : false,
  max: 2, onnotice: () => {}, connection: { TimeZone: 'UTC' },
});


function show(rows) {
  for (const r of rows) {
    console.log(JSON.stringify(r, (k, v) => (typeof v === 'bigint' ? v.toString() + 'n' : v instanceof Date ? v.toISOString() : v)));
  }
}

async function main() {
  await step('select', async () => {
    show(await sql`SELECT 1 AS one, 'x'::text AS t, NULL::int AS n, true AS b, 1.5::float8 AS f, 12.50::numeric(6,2) AS d`);
  });
  await step('parameters', async () => {
    show(await sql`SELECT ${42}::int AS i, ${'hi'} AS t, ${true}::bool AS b, ${new Date('2024-01-02T03:04:05Z')}::timestamptz AS ts, ${null}::text AS n`);
    show(await sql`SELECT name FROM customers WHERE id = ${2}`);
    show(await sql`SELECT order_id, amount FROM orders WHERE customer_id = ANY(${[1, 3]}::int[]) ORDER BY order_id`);
  });
  await step('table', async () => {
    await sql`DROP TABLE IF EXISTS pj_docs`;
    await sql`CREATE TABLE pj_docs (id int PRIMARY KEY, doc json, meta jsonb, tags text[])`;
    console.log('created');
  });
  await step('sql.json', async () => {
    const doc = { a: 1, b: [true, null, 'x'], c: { d: 2.5 } };
    const r = await sql`INSERT INTO pj_docs VALUES (1, ${sql.json(doc)}, ${sql.json({ k: 'v', n: 3 })}, ${['p', 'q']}) RETURNING id, doc, meta, tags`;
    show(r);
    show(await sql`SELECT doc->'b' AS b, doc->>'a' AS a, meta->>'k' AS k, meta @> ${sql.json({ n: 3 })} AS has FROM pj_docs`);
    show(await sql`SELECT ${sql.json([1, 'two', { three: 3 }])} AS arr, pg_typeof(${sql.json({})}) AS type`);
  });
  await step('insert objects', async () => {
    const rows = [{ id: 2, doc: null, meta: null, tags: null }, { id: 3, doc: null, meta: null, tags: ['r'] }];
    show(await sql`INSERT INTO pj_docs ${sql(rows, 'id', 'tags')} RETURNING id, tags`);
    show(await sql`SELECT ${sql('id')}, ${sql('tags')} FROM ${sql('pj_docs')} WHERE id IN ${sql([2, 3])} ORDER BY id`);
    show(await sql`UPDATE pj_docs SET ${sql({ tags: ['s', 't'] }, 'tags')} WHERE id = 2 RETURNING id, tags`);
  });
  await step('transaction', async () => {
    const n = await sql.begin(async (tx) => {
      await tx`INSERT INTO pj_docs (id) VALUES (10)`;
      const [{ count }] = await tx`SELECT count(*) FROM pj_docs`;
      return count;
    });
    console.log('committed, count in tx', n);
    try {
      await sql.begin(async (tx) => {
        await tx`INSERT INTO pj_docs (id) VALUES (11)`;
        throw new Error('abort');
      });
    } catch (e) {
      console.log('rolled back:', e.message);
    }
    show(await sql`SELECT id FROM pj_docs ORDER BY id`);
  });
  await step('cursor', async () => {
    const seen = [];
    await sql`SELECT g FROM generate_series(1, 7) g ORDER BY g`.cursor(3, async (rows) => { seen.push(rows.map((r) => r.g)); });
    console.log(JSON.stringify(seen));
  });
  await step('unsafe multi-statement', async () => {
    const r = await sql.unsafe('SELECT 1 AS a; SELECT 2 AS b');
    console.log(JSON.stringify(r.map((x) => [...x])));
  });
  await step('pipelined', async () => {
    const rs = await Promise.all([1, 2, 3, 4].map((i) => sql`SELECT ${i}::int * 10 AS v`));
    console.log(rs.map((r) => r[0].v).join(' '));
  });
  await step('error', async () => {
    await sql`SELECT * FROM no_such_table`;
  });
  await step('error in a parameter', async () => {
    await sql`SELECT ${'not a number'}::int`;
  });
  await step('after errors', async () => {
    show(await sql`SELECT count(*)::int AS n FROM pj_docs`);
  });
  await sql.end();
}

main().catch((e) => { console.log('# fatal: ' + oneLine(e.stack)); process.exit(1); });
