// knex session's first migration: a table with an identity key (increments),
// an enum column (enu: a text column with a CHECK) and a unique column.
exports.up = (knex) => knex.schema.createTable('kx_authors', (t) => {
  t.increments('id');
  t.string('name', 100).notNullable().unique();
  t.enu('status', ['active', 'retired']).notNullable().defaultTo('active');
  t.timestamp('created_at', { useTz: true }).defaultTo('2024-01-01T00:00:00Z');
});

exports.down = (knex) => knex.schema.dropTable('kx_authors');
