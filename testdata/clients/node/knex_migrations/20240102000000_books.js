// knex session's second migration: a table that references the first
// (references(): a FOREIGN KEY with ON DELETE CASCADE), an index, and a
// column added to the first table afterwards.
exports.up = async (knex) => {
  await knex.schema.createTable('kx_books', (t) => {
    t.increments('id');
    t.integer('author_id').unsigned().notNullable()
      .references('id').inTable('kx_authors').onDelete('CASCADE');
    t.string('title').notNullable();
    t.decimal('price', 8, 2);
    t.index(['author_id', 'title']);
  });
  await knex.schema.alterTable('kx_authors', (t) => {
    t.integer('rank').notNullable().defaultTo(0);
  });
};

exports.down = async (knex) => {
  await knex.schema.alterTable('kx_authors', (t) => { t.dropColumn('rank'); });
  await knex.schema.dropTable('kx_books');
};
