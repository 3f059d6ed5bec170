-- A small film-rental database (SQLite), to try `restgraph init --from` on
-- (docs/existing-database.md): sqlite3 film-rental.db < examples/film-rental/sqlite.sql

create table language (
  language_id integer primary key autoincrement,
  name varchar(20) not null unique,
  last_update timestamp not null default current_timestamp
);

create table country (
  country_code char(2) primary key check (length(country_code) = 2),
  name text not null unique
);

create table customer (
  customer_id integer primary key,
  first_name varchar(45) not null,
  last_name varchar(45) not null,
  email text unique check (email like '%@%'),
  country_code char(2) references country on delete set null,
  active boolean not null default 1,
  created_at timestamp not null default current_timestamp
);

create table film (
  film_id integer primary key,
  title text not null,
  description text,
  release_year integer check (release_year between 1888 and 2100),
  language_id integer not null references language on delete restrict,
  rental_rate decimal(4, 2) not null default 4.99,
  replacement_cost decimal(20, 2) not null,
  rating text default 'G' check (rating in ('G', 'PG', 'PG-13', 'R', 'NC-17')),
  special_features json,
  metadata json,
  poster blob,
  running_time interval,
  "3d" boolean not null default 0,
  view_count bigint not null default 0,
  last_update timestamp not null default current_timestamp
);

create table actor (
  actor_id integer primary key,
  first_name text not null,
  last_name text not null
);

create table film_actor (
  actor_id integer not null references actor on delete cascade,
  film_id integer not null references film on delete cascade,
  character_name text,
  primary key (actor_id, film_id)
);

create table actor_award (
  award_id integer primary key,
  actor_id integer not null,
  film_id integer not null,
  award text not null,
  year integer not null,
  foreign key (actor_id, film_id) references film_actor (actor_id, film_id) on delete cascade
);

create table inventory (
  inventory_id integer primary key,
  film_id integer not null references film,
  store_code text not null
);

create table rental (
  rental_id uuid primary key not null default (lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-a' || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))),
  rented_at timestamp not null default current_timestamp,
  inventory_id integer not null references inventory,
  customer_id integer not null references customer on delete restrict,
  returned_at timestamp,
  check (returned_at is null or returned_at >= rented_at)
);

create table payment (
  payment_id integer primary key,
  rental_id uuid not null references rental on delete cascade,
  amount decimal(20, 2) not null check (amount >= 0),
  paid_on date not null default current_date,
  paid_at time
);

create table rental_log (
  rental_id uuid,
  event text not null,
  logged_at timestamp not null default current_timestamp
);

create index rental_customer_id_idx on rental (customer_id);

create view film_list as
  select f.film_id, f.title, l.name as language, f.rating
  from film f join language l using (language_id);
