#!/bin/sh
# Loads the sample data of the documentation's examples into a server of the built-in example
# schema: 4 users, 3 posts, 2 products and 1 order, numbered from 1 on a new database.
# Usage: sh examples/sample-data.sh [base-url] [token]   (defaults: http://127.0.0.1:3000, $TOKEN)
set -e
B=${1:-http://127.0.0.1:3000}
A="Authorization: Bearer ${2:-$TOKEN}"
J='Content-Type: application/json'
post() { curl -sSf -o /dev/null -X POST "$B/$1" -H "$A" -H "$J" -d "$2"; }
post users '{"name":"Alice","email":"alice@example.com"}'
post users '{"name":"Carol"}'
post users '{"name":"Dan"}'
post users '{"name":"Eve","email":"eve@example.com"}'
post posts '{"title":"Hello, world","userId":1,"tags":["intro"]}'
post posts '{"title":"SQLite tips","userId":1,"published":true,"publishedAt":"2026-11-01T10:00:00+01:00"}'
post posts '{"title":"Draft","userId":4}'
post products '{"name":"Mug","sku":"MUG-1","price":9.5}'
post products '{"name":"Poster","sku":"POSTER-2","price":15,"currency":"USD"}'
post orders '{"userId":2,"productId":1,"quantity":2,"placedOn":"2026-11-20"}'
echo "Loaded 4 users, 3 posts, 2 products and 1 order into $B."
