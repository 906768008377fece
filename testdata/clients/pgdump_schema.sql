-- Loaded after schema.sql for TestPgDump (clienttest/pgdump_test.go),
-- which dumps and restores the whole database: tables with primary keys,
-- UNIQUE, CHECK and FOREIGN KEY constraints (ON DELETE CASCADE, across
-- schemas), a varchar CHECK IN list (printed with PostgreSQL's casts),
-- single- and two-column indexes, a serial, an identity and a
-- free-standing sequence, views and a materialized view over a join with
-- a unique index, in schema shop; a view in public over shop's tables.
CREATE SCHEMA shop;
CREATE TABLE shop.customers (id int PRIMARY KEY, name text NOT NULL, email text UNIQUE, CHECK (length(name) > 0));
CREATE SEQUENCE shop.order_seq START 100;
CREATE TABLE shop.orders (id int PRIMARY KEY DEFAULT nextval('shop.order_seq'), customer_id int NOT NULL REFERENCES shop.customers (id) ON DELETE CASCADE, amount numeric(10,2) CHECK (amount >= 0), placed date, note text, status varchar(10) NOT NULL DEFAULT 'new' CHECK (status IN ('new', 'paid')));
CREATE INDEX orders_placed_idx ON shop.orders (placed);
CREATE TABLE shop.items (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, order_id int REFERENCES shop.orders (id), qty int DEFAULT 1, price float8);
CREATE INDEX items_order_qty_idx ON shop.items (order_id, qty);
CREATE TABLE shop.notes (n serial PRIMARY KEY, customer_id int REFERENCES public.customers (id), body text, at timestamptz);
INSERT INTO shop.customers VALUES (1, 'ann', 'ann@example.com'), (2, 'bob', NULL), (3, 'cy', 'cy@example.com');
INSERT INTO shop.orders (customer_id, amount, placed, note) VALUES (1, 10.50, '2024-01-02', 'first'), (1, 3, '2024-02-03', NULL), (2, 7.25, NULL, E'tab\tand ''quote'' and \\ backslash');
INSERT INTO shop.items (order_id, qty, price) VALUES (100, 2, 1.5), (101, 1, NULL), (102, 3, 0.25);
INSERT INTO shop.notes (customer_id, body, at) VALUES (1, 'call back', '2024-03-04 05:06:07+00'), (3, NULL, NULL);
CREATE VIEW shop.big_orders AS SELECT id, amount FROM shop.orders WHERE amount > 5;
CREATE VIEW public.noted AS SELECT c.name, n.body FROM customers c JOIN shop.notes n ON n.customer_id = c.id;
CREATE MATERIALIZED VIEW shop.customer_totals AS SELECT c.id, c.name, sum(o.amount) AS total, count(*) AS n FROM shop.customers c JOIN shop.orders o ON o.customer_id = c.id GROUP BY c.id, c.name;
CREATE UNIQUE INDEX customer_totals_id ON shop.customer_totals (id);
