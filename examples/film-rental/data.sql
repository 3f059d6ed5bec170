-- A few rows for the film-rental sample, in SQL both databases take (docs/existing-database.md):
--   sqlite3 film-rental.db < examples/film-rental/data.sql
--   psql <database-url> -c 'set search_path to film_rental' -f examples/film-rental/data.sql
-- Keys the database generates are left to it: the rows get 1, 2, 3 in the order written.

insert into language (name) values ('English'), ('French');

insert into country (country_code, name) values ('FR', 'France'), ('JP', 'Japan'), ('US', 'United States');

insert into customer (first_name, last_name, email, country_code) values
  ('Mary', 'Smith', 'mary@example.com', 'US'),
  ('Amélie', 'Dupont', 'amelie@example.com', 'FR'),
  ('Kenji', 'Sato', null, 'JP');

insert into film (title, release_year, language_id, rental_rate, replacement_cost, rating, view_count) values
  ('Academy Dinosaur', 2006, 1, 0.99, 20.99, 'PG', 9007199254740993),
  ('Ace Goldfinger', 2006, 1, 4.99, 12.99, 'G', 42),
  ('Le Voyage', 2011, 2, 2.99, 18.99, 'NC-17', 0);

insert into actor (first_name, last_name) values ('Penelope', 'Guiness'), ('Nick', 'Wahlberg'), ('Ed', 'Chase');

insert into film_actor (actor_id, film_id, character_name) values
  (1, 1, 'Dr. Ellie'), (2, 1, 'The dinosaur'), (1, 3, 'Odile'), (3, 2, 'Goldfinger');

insert into actor_award (actor_id, film_id, award, year) values (1, 1, 'Best Actress', 2007);

insert into inventory (film_id, store_code) values (1, 'downtown'), (1, 'harbor'), (2, 'downtown');

insert into rental (rental_id, rented_at, inventory_id, customer_id, returned_at) values
  ('1f0c3a2e-5b7d-4c1e-9a8f-0d2b6e4c7a11', '2026-05-24T22:53:30.000Z', 1, 1, '2026-05-26T10:00:00.000Z'),
  ('6b2d9e41-8c3a-4f5b-b7e2-3a1c0f9d8e22', '2026-05-25T09:12:00.000Z', 3, 1, null),
  ('c84a17f3-2e6b-4d9c-8f1a-5b7e3d2c6f33', '2026-05-25T17:40:00.000Z', 2, 2, null);

insert into payment (rental_id, amount, paid_on) values
  ('1f0c3a2e-5b7d-4c1e-9a8f-0d2b6e4c7a11', 0.99, '2026-05-24'),
  ('6b2d9e41-8c3a-4f5b-b7e2-3a1c0f9d8e22', 4.99, '2026-05-25');
