// sequelize session of the client suite (clienttest.TestSequelize).
//
//   cd testdata/clients/node && npm ci && node sequelize_session.js
//
// The connection comes from PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD
// and PGSSLMODE. Sequelize (over node-postgres) sets client_min_messages
// at connect, creates the models' tables with sync() (serial keys,
// foreign keys for the associations, an ENUM type), reads them back with
// describeTable and its index and foreign-key queries, and with
// sync({alter: true}) compares each model with the table and alters what
// changed (a column added to a model, a changed type, a dropped column).
//
// Every step starts with a line "=== NAME" and runs on its own: an error
// prints "ERROR <SQLSTATE>" (compared) and "# <message>" (shown, not
// compared).
const { Sequelize, DataTypes, Op } = require('sequelize');
const steps = require('./steps');

const { oneLine } = steps;

const ssl = process.env.PGSSLMODE === 'require' ? { require: true, rejectUnauthorized: false } : false;
const sequelize = new Sequelize(process.env.PGDATABASE, process.env.PGUSER, process.env.PGPASSWORD || '', {
  host: process.env.PGHOST, port: parseInt(process.env.PGPORT, 10), dialect: 'postgres',
  dialectOptions: { ssl }, logging: process.env.SQ_LOG ? console.log : false, pool: { max: 2 },
});

// Sequelize wraps the driver's error: the SQLSTATE is its parent's.
const step = (name, body) => steps.step(name, body, { code: (e) => e.parent && e.parent.code });

function plain(v) {
  return JSON.stringify(v, (k, x) => (x instanceof Date ? x.toISOString() : x));
}

function define(withPhone) {
  const attrs = {
    name: { type: DataTypes.STRING(60), allowNull: false, unique: true },
    tier: { type: DataTypes.ENUM('free', 'paid'), allowNull: false, defaultValue: 'free' },
  };
  if (withPhone) {
    attrs.phone = { type: DataTypes.STRING(20), allowNull: true };
    attrs.score = { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 };
  }
  const User = sequelize.define('SqUser', attrs, { tableName: 'sq_users', timestamps: false });
  const Post = sequelize.define('SqPost', {
    title: { type: DataTypes.STRING, allowNull: false },
    body: { type: withPhone ? DataTypes.TEXT : DataTypes.STRING(100) },
  }, { tableName: 'sq_posts', timestamps: false });
  const Tag = sequelize.define('SqTag', { label: DataTypes.STRING(30) }, { tableName: 'sq_tags', timestamps: false });
  User.hasMany(Post, { foreignKey: 'authorId', onDelete: 'CASCADE' });
  Post.belongsTo(User, { foreignKey: 'authorId' });
  Post.belongsToMany(Tag, { through: 'sq_post_tags', foreignKey: 'postId', otherKey: 'tagId', timestamps: false });
  Tag.belongsToMany(Post, { through: 'sq_post_tags', foreignKey: 'tagId', otherKey: 'postId', timestamps: false });
  return { User, Post, Tag };
}

async function describe(table) {
  const d = await sequelize.getQueryInterface().describeTable(table);
  for (const [col, info] of Object.entries(d).sort()) {
    console.log(col, info.type, 'null=' + info.allowNull, 'default=' + info.defaultValue, 'pk=' + info.primaryKey,
      info.special && info.special.length ? 'special=' + info.special.join(',') : '');
  }
}

async function foreignKeys(table) {
  const refs = await sequelize.getQueryInterface().getForeignKeyReferencesForTable(table);
  for (const r of refs.sort((a, b) => a.constraintName.localeCompare(b.constraintName))) {
    console.log(r.constraintName, r.columnName, '->', r.referencedTableName + '.' + r.referencedColumnName);
  }
}

async function main() {
  let m = define(false);
  await step('authenticate', async () => {
    await sequelize.authenticate();
    console.log('ok');
  });
  await step('sync force', async () => {
    await sequelize.getQueryInterface().dropTable('sq_post_tags');
    await sequelize.sync({ force: true });
    console.log(await sequelize.getQueryInterface().showAllTables().then((t) => t.filter((n) => n.startsWith('sq_')).sort()));
  });
  await step('describeTable', async () => {
    await describe('sq_users');
    await describe('sq_posts');
    await describe('sq_post_tags');
  });
  await step('foreign keys', async () => {
    await foreignKeys('sq_posts');
    await foreignKeys('sq_post_tags');
  });
  await step('create with associations', async () => {
    const u = await m.User.create({ name: 'ann' });
    const p1 = await m.Post.create({ title: 'first', authorId: u.id });
    await m.Post.create({ title: 'second', body: 'text', authorId: u.id });
    const t = await m.Tag.create({ label: 'news' });
    await p1.addSqTag(t);
    const users = await m.User.findAll({ include: [{ model: m.Post, include: [m.Tag] }], order: [['id'], [m.Post, 'id']] });
    console.log(plain(users.map((x) => x.toJSON())));
  });
  await step('enum rejects', async () => {
    await m.User.create({ name: 'bob', tier: 'gold' });
  });
  await step('sync alter', async () => {
    sequelize.modelManager.models.length = 0;
    m = define(true);
    await sequelize.sync({ alter: true });
    await describe('sq_users');
    await describe('sq_posts');
    await foreignKeys('sq_posts');
  });
  await step('after alter', async () => {
    await m.User.create({ name: 'cy', phone: '555', score: 3 });
    console.log(plain(await m.User.findAll({ attributes: ['name', 'phone', 'score', 'tier'], order: [['name']], raw: true })));
    console.log(await m.User.count({ where: { score: { [Op.gte]: 0 } } }));
  });
  await step('cascade', async () => {
    await m.User.destroy({ where: { name: 'ann' } });
    console.log(await m.Post.count(), await m.Tag.count());
  });
  await step('transaction', async () => {
    try {
      await sequelize.transaction(async (t) => {
        await m.User.create({ name: 'dee' }, { transaction: t });
        throw new Error('abort');
      });
    } catch (e) {
      console.log('rolled back:', e.message);
    }
    console.log(await m.User.count());
  });
  await step('drop', async () => {
    const qi = sequelize.getQueryInterface();
    for (const t of ['sq_post_tags', 'sq_posts', 'sq_tags', 'sq_users']) await qi.dropTable(t, {});
    await qi.dropEnum('enum_sq_users_tier', {});
    console.log(await sequelize.getQueryInterface().showAllTables().then((t) => t.filter((n) => n.startsWith('sq_'))));
  });
  await sequelize.close();
}

main().catch((e) => { console.log('# fatal: ' + oneLine(e.stack)); process.exit(1); });
