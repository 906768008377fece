-- The objects every client session runs against, loaded by the harness
-- (clienttest/) into mvserver and into the PostgreSQL oracle alike, one
-- statement at a time (statements end with ";" at the end of a line).
--
-- Only what mvserver supports today, so the suites test the clients'
-- conversations rather than DDL breadth: INT PRIMARY KEY instead of serial,
-- no FOREIGN KEY. Timestamps are literals (the sessions run with TimeZone
-- UTC), never now().
CREATE SCHEMA reporting;
CREATE TABLE customers (
  id int PRIMARY KEY,
  name text NOT NULL,
  email varchar(200) UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE customers IS 'customer master';
COMMENT ON COLUMN customers.email IS 'contact address';
CREATE TABLE orders (
  order_id int NOT NULL,
  customer_id int,
  amount numeric(10,2),
  ordered_at timestamp,
  note text
);
CREATE INDEX orders_customer_idx ON orders(customer_id);
INSERT INTO customers VALUES
  (1, 'alice', 'a@x.org', '2024-01-01 09:00:00+00'),
  (2, 'bob', 'b@x.org', '2024-01-02 09:30:00+00'),
  (3, 'carol', NULL, '2024-01-03 10:00:00+00');
INSERT INTO orders VALUES
  (1, 1, 10.50, '2024-01-01 10:00', NULL),
  (2, 1, 20.00, '2024-01-02 11:00', 'gift'),
  (3, 2, 5.25, '2024-01-03 12:00', NULL),
  (4, 3, 100.00, '2024-01-04 13:00', 'rush');
CREATE VIEW big_orders AS SELECT order_id, customer_id, amount FROM orders WHERE amount > 10;
CREATE MATERIALIZED VIEW sales_by_customer AS
  SELECT customer_id, count(*) AS n_orders, sum(amount) AS total FROM orders GROUP BY customer_id;
