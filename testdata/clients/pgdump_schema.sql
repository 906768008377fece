-- The database TestPgDump dumps and restores (clienttest/pgdump_test.go):
-- tables with primary keys, UNIQUE, CHECK and FOREIGN KEY constraints,
-- a secondary index, a serial, an identity and a free-standing sequence,
-- a second schema, views and a materialized view over a join.
CREATE SCHEMA shop;
CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL, email text UNIQUE, CHECK (length(name) > 0));
CREATE SEQUENCE order_seq START 100;
CREATE TABLE orders (id int PRIMARY KEY DEFAULT nextval('order_seq'), customer_id int NOT NULL REFERENCES customers (id) ON DELETE CASCADE, amount numeric(10,2) CHECK (amount >= 0), placed date, note text);
CREATE INDEX orders_customer_idx ON orders (customer_id);
CREATE TABLE items (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, order_id int REFERENCES orders (id), qty int DEFAULT 1, price float8);
CREATE TABLE shop.notes (n serial PRIMARY KEY, customer_id int REFERENCES customers (id), body text, at timestamptz);
INSERT INTO customers VALUES (1, 'ann', 'ann@example.com'), (2, 'bob', NULL), (3, 'cy', 'cy@example.com');
INSERT INTO orders (customer_id, amount, placed, note) VALUES (1, 10.50, '2024-01-02', 'first'), (1, 3, '2024-02-03', NULL), (2, 7.25, NULL, E'tab\tand ''quote'' and \\ backslash');
INSERT INTO items (order_id, qty, price) VALUES (100, 2, 1.5), (101, 1, NULL), (102, 3, 0.25);
INSERT INTO shop.notes (customer_id, body, at) VALUES (1, 'call back', '2024-03-04 05:06:07+00'), (3, NULL, NULL);
CREATE VIEW big_orders AS SELECT id, amount FROM orders WHERE amount > 5;
CREATE VIEW shop.noted AS SELECT c.name, n.body FROM customers c JOIN shop.notes n ON n.customer_id = c.id;
CREATE MATERIALIZED VIEW customer_totals AS SELECT c.id, c.name, sum(o.amount) AS total, count(*) AS n FROM customers c JOIN orders o ON o.customer_id = c.id GROUP BY c.id, c.name;
