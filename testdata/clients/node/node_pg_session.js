// node-postgres session of the client suite (clienttest.TestNodePg).
//
//   cd testdata/clients/node && npm ci && node node_pg_session.js
//
// The connection comes from PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD
// and PGSSLMODE. node-postgres sends a query without values as one simple
// Query, and a query with values (or a name) through the extended protocol:
// Parse (no parameter types: the server infers them), Bind (text), Describe
// portal, Execute, Sync; a named query is parsed once per connection.
//
// Every step starts with a line "=== NAME" and runs on its own: an error
// prints "ERROR <SQLSTATE>" (compared) and "# <message>" (shown, not
// compared), the client is replaced if it broke, and the next step goes on.
const { Client } = require('pg');
const steps = require('./steps');

const { oneLine } = steps;

function settings() {
  const ssl = process.env.PGSSLMODE === 'require' ? { rejectUnauthorized: false } : false;
  return {
    host: process.env.PGHOST || '127.0.0.1',
    port: parseInt(process.env.PGPORT || '5432', 10),
    database: process.env.PGDATABASE || 'postgres',
    user: process.env.PGUSER || 'postgres',
    password: process.env.PGPASSWORD || '',
    ssl,
  };
}

let client = null;
let broken = false;

async function connect() {
  const c = new Client(settings());
  c.on('error', (e) => { broken = true; console.log('# client error: ' + e.message); });
  await c.connect();
  broken = false;
  return c;
}

const step = (name, body) => steps.step(name, body, { recover });

async function recover() {
  if (client && !broken) {
    try {
      await client.query('ROLLBACK'); // a no-op (with a warning) outside a transaction
      return;
    } catch (e) {
      console.log('# recover: ' + oneLine(e.message));
    }
  }
  try { if (client) await client.end(); } catch (e) { /* gone already */ }
  try {
    client = await connect();
    console.log('# reconnected');
  } catch (e) {
    console.log('# reconnect failed: ' + oneLine(e.message));
  }
}

// show prints a result: its command, row count, fields (name:type OID) and rows.
function show(r) {
  console.log(`${r.command} ${r.rowCount} fields=${r.fields.map((f) => f.name + ':' + f.dataTypeID).join(',')}`);
  for (const row of r.rows) console.log(JSON.stringify(row, (k, v) => (v instanceof Date ? v.toISOString() : v)));
}

async function main() {
  await step('connect', async () => {
    client = await connect();
    const p = client.connectionParameters;
    console.log('connected as', p.user, 'to', p.database, 'ssl', Boolean(client.ssl));
  });

  await step('query without values (simple protocol)', async () => {
    show(await client.query('SELECT id, name, email, created_at FROM customers ORDER BY id'));
  });

  await step('parameterized query (int, string, Date, numeric string, null, boolean)', async () => {
    show(await client.query(
      'SELECT order_id, amount, ordered_at FROM orders WHERE customer_id = $1 AND note IS DISTINCT FROM $2 '
      + 'AND ordered_at > $3 AND amount >= $4 AND $5::text IS NULL AND $6 ORDER BY order_id',
      [1, "it's", new Date(Date.UTC(2023, 11, 31)), '1.50', null, true]));
  });

  await step('parameterized query with an array (= ANY($1))', async () => {
    show(await client.query('SELECT order_id FROM orders WHERE order_id = ANY($1) ORDER BY order_id', [[1, 2, 3]]));
  });

  await step('parameter types inferred by the server', async () => {
    show(await client.query('SELECT $1::int + 1 AS x, $2::numeric * 2 AS y, $3::text || \'!\' AS z, $4::date AS d, $5::timestamptz AS ts',
      [41, '1.25', 'hi', '2024-01-02', '2024-01-02T03:04:05Z']));
  });

  await step('JS object as a json parameter', async () => {
    show(await client.query('SELECT $1::json AS j', [{ a: 1, b: [true, null] }]));
  });

  await step('named statement, three executions', async () => {
    for (const id of [1, 2, 3]) {
      show(await client.query({
        name: 'orders_by_customer',
        text: 'SELECT order_id, amount FROM orders WHERE customer_id = $1 ORDER BY order_id',
        values: [id],
      }));
    }
  });

  await step('named statement without parameters', async () => {
    for (let i = 0; i < 2; i++) {
      show(await client.query({ name: 'count_customers', text: 'SELECT count(*) AS n FROM customers' }));
    }
  });

  await step("rowMode 'array'", async () => {
    show(await client.query({ text: 'SELECT $1::int + 1 AS x, $2::text AS y', values: [41, 'z'], rowMode: 'array' }));
  });

  await step('parameterized INSERT, UPDATE and DELETE', async () => {
    show(await client.query('INSERT INTO orders (order_id, customer_id, amount, note) VALUES ($1, $2, $3, $4)', [50, 2, '7.25', 'node']));
    show(await client.query('UPDATE orders SET amount = amount + $1 WHERE order_id = $2', ['0.75', 50]));
    show(await client.query('SELECT order_id, amount, note FROM orders WHERE order_id = $1', [50]));
    show(await client.query('DELETE FROM orders WHERE order_id = $1', [50]));
  });

  await step('transaction: BEGIN, INSERT, ROLLBACK', async () => {
    await client.query('BEGIN');
    show(await client.query('INSERT INTO customers (id, name, created_at) VALUES ($1, $2, $3)', [30, 'ivan', '2024-07-01T00:00:00Z']));
    await client.query('ROLLBACK');
    show(await client.query('SELECT count(*) AS n FROM customers'));
  });

  await step('transaction: BEGIN, INSERT, COMMIT, DELETE', async () => {
    await client.query('BEGIN');
    await client.query('INSERT INTO customers (id, name, created_at) VALUES ($1, $2, $3)', [31, 'judy', '2024-07-02T00:00:00Z']);
    await client.query('COMMIT');
    show(await client.query('SELECT count(*) AS n FROM customers'));
    show(await client.query('DELETE FROM customers WHERE id = $1', [31]));
  });

  await step('INSERT ... RETURNING with parameters', async () => {
    await client.query('BEGIN');
    show(await client.query('INSERT INTO customers (id, name, email, created_at) VALUES ($1, $2, $3, $4) RETURNING id, name', [32, 'kim', null, '2024-07-03T00:00:00Z']));
    await client.query('ROLLBACK');
  });

  await step('two statements in one query string', async () => {
    const rs = await client.query('SELECT 1 AS a; SELECT 2 AS b');
    for (const r of rs) show(r);
  });

  await step('error in the extended protocol, then the connection goes on', async () => {
    try {
      await client.query('SELECT $1::int / 0', [1]);
    } catch (e) {
      console.log('error', e.code);
    }
    show(await client.query('SELECT $1::text AS still', ['here']));
  });

  await step('end', async () => {
    await client.end();
    console.log('ended');
  });
}

main().catch((e) => { console.log('# fatal: ' + oneLine(e.stack)); process.exit(1); });
