// knex session of the client suite (clienttest.TestKnex).
//
//   cd testdata/clients/node && npm ci && node knex_session.js
//
// The connection comes from PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD
// and PGSSLMODE. knex's migrator runs the two migrations in
// knex_migrations/ (migrate:latest), each in a transaction, keeping its
// bookkeeping in the tables knex_migrations and knex_migrations_lock;
// then the steps use what they made (the enum's CHECK, the foreign key's
// cascade, the added column's default) and roll the batch back
// (rollback), and migrate again.
//
// Every step starts with a line "=== NAME" and runs on its own: an error
// prints "ERROR <SQLSTATE>" (compared) and "# <message>" (shown, not
// compared).
const path = require('path');
const knexLib = require('knex');
const { oneLine, step } = require('./steps');

const ssl = process.env.PGSSLMODE === 'require' ? { rejectUnauthorized: false } : false;
const knex = knexLib({
  client: 'pg',
  connection: {
    host: process.env.PGHOST, port: parseInt(process.env.PGPORT, 10), database: process.env.PGDATABASE,
    user: process.env.PGUSER, password: process.env.PGPASSWORD || '', ssl,
  },
  pool: { min: 1, max: 2 },
  migrations: { directory: path.join(__dirname, 'knex_migrations'), loadExtensions: ['.js'] },
});


function rows(rs) {
  for (const r of rs) {
    console.log(Object.entries(r).map(([k, v]) => k + '=' + (v instanceof Date ? v.toISOString() : JSON.stringify(v))).join(' '));
  }
}

async function columns(table) {
  rows(await knex('information_schema.columns')
    .select('column_name', 'data_type', 'is_nullable', 'column_default')
    .where({ table_name: table }).orderBy('ordinal_position'));
}

async function main() {
  await step('migrate:latest', async () => {
    const [batch, log] = await knex.migrate.latest();
    console.log('batch', batch, 'ran', log);
  });
  await step('migrate:status', async () => {
    console.log('pending', await knex.migrate.status());
    const [done, pending] = await knex.migrate.list();
    console.log('done', done.map((m) => m.name), 'pending', pending.length);
    rows(await knex('knex_migrations').select('name', 'batch').orderBy('id'));
  });
  await step('hasTable and columns', async () => {
    console.log('kx_books', await knex.schema.hasTable('kx_books'), 'rank', await knex.schema.hasColumn('kx_authors', 'rank'));
    await columns('kx_authors');
    await columns('kx_books');
  });
  await step('constraints', async () => {
    rows(await knex.raw(`SELECT tc.constraint_name, tc.table_name, tc.constraint_type, kcu.column_name
      FROM information_schema.table_constraints tc
      JOIN information_schema.key_column_usage kcu USING (constraint_schema, constraint_name)
      WHERE tc.table_name IN ('kx_authors', 'kx_books') ORDER BY 1, 4`).then((r) => r.rows));
    rows(await knex.raw(`SELECT constraint_name, unique_constraint_name, update_rule, delete_rule
      FROM information_schema.referential_constraints WHERE constraint_name LIKE 'kx_%' ORDER BY 1`).then((r) => r.rows));
    rows(await knex.raw(`SELECT conname, contype FROM pg_constraint
      WHERE conrelid IN ('kx_authors'::regclass, 'kx_books'::regclass) ORDER BY 1`).then((r) => r.rows));
  });
  await step('insert returning', async () => {
    rows(await knex('kx_authors').insert([{ name: 'ann' }, { name: 'ben', status: 'retired' }]).returning(['id', 'name', 'status', 'rank']));
    rows(await knex('kx_books').insert([
      { author_id: 1, title: 'one', price: '9.99' }, { author_id: 1, title: 'two' }, { author_id: 2, title: 'three', price: 20 },
    ]).returning('id'));
  });
  await step('enu check rejects', async () => {
    await knex('kx_authors').insert({ name: 'cy', status: 'unknown' });
  });
  await step('references rejects', async () => {
    await knex('kx_books').insert({ author_id: 99, title: 'orphan' });
  });
  await step('unique rejects', async () => {
    await knex('kx_authors').insert({ name: 'ann' });
  });
  await step('join and aggregate', async () => {
    rows(await knex('kx_authors as a').join('kx_books as b', 'b.author_id', 'a.id')
      .select('a.name').count('* as n').sum('b.price as total').groupBy('a.name').orderBy('a.name'));
  });
  await step('transaction', async () => {
    await knex.transaction(async (trx) => {
      await trx('kx_authors').where({ name: 'ben' }).update({ rank: 5 });
      rows(await trx('kx_authors').select('name', 'rank').orderBy('name'));
    });
    try {
      await knex.transaction(async (trx) => {
        await trx('kx_authors').update({ rank: 7 });
        throw new Error('abort');
      });
    } catch (e) {
      console.log('rolled back:', e.message);
    }
    rows(await knex('kx_authors').select('name', 'rank').orderBy('name'));
  });
  await step('cascade delete', async () => {
    console.log('deleted', await knex('kx_authors').where({ name: 'ann' }).del());
    rows(await knex('kx_books').select('title').orderBy('title'));
  });
  await step('rollback', async () => {
    const [batch, log] = await knex.migrate.rollback();
    console.log('batch', batch, 'rolled back', log);
    console.log('kx_books', await knex.schema.hasTable('kx_books'), 'kx_authors', await knex.schema.hasTable('kx_authors'));
    rows(await knex('knex_migrations').count('* as n'));
  });
  await step('migrate:latest again', async () => {
    const [batch, log] = await knex.migrate.latest();
    console.log('batch', batch, 'ran', log);
    await columns('kx_authors');
  });
  await step('migrate:down one', async () => {
    console.log(await knex.migrate.down());
    console.log('rank', await knex.schema.hasColumn('kx_authors', 'rank'), 'kx_books', await knex.schema.hasTable('kx_books'));
  });
  await knex.destroy();
}

main().catch((e) => { console.log('# fatal: ' + oneLine(e.stack)); process.exit(1); });
