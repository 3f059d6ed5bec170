#!/bin/bash
# Download check of the file benchmarks (bench/files.js) with wrk, a load generator in C that is not
# the limit autocannon is at 1 MB responses: restgraph (SQLite, the built dist/) and
# bench/baseline-files/server.js serving the same 1 MB file, each on CPU 0, wrk (16 connections,
# 8 s, two rounds) on CPU 1. Needs wrk, taskset, curl and `npm run build`. bash bench/files-download-wrk.sh
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
D=$(mktemp -d /tmp/rg-bench-files-dl-XXXX); cd $D
head -c 1048576 /dev/urandom > body.bin
printf 'resources:\n  papers:\n    fields:\n      name: { type: string }\n      file: { type: file, maxSize: 16MB }\n' > schema.yaml
T=bench-files-admin-token-0123456789
PORT=4711 FILES_DIR=$D/bfiles BASELINE_FSYNC=0 taskset -c 0 node $ROOT/bench/baseline-files/server.js & B=$!
PORT=4712 HOST=127.0.0.1 DATABASE_URL=sqlite:$D/f.db RESTGRAPH_SCHEMA=$D/schema.yaml RESTGRAPH_ADMIN_TOKEN=$T RESTGRAPH_FILES_DIR=$D/files taskset -c 0 node $ROOT/dist/cli/main.js serve >rg.log 2>&1 & R=$!
sleep 6
curl -s -X PUT --data-binary @body.bin -H 'content-type: application/octet-stream' http://127.0.0.1:4711/files/1 >/dev/null
curl -s -X POST -H "authorization: Bearer $T" -H 'content-type: application/json' -d '{"name":"b"}' http://127.0.0.1:4712/papers >/dev/null
curl -s -X PUT --data-binary @body.bin -H "authorization: Bearer $T" -H 'content-type: application/octet-stream' http://127.0.0.1:4712/papers/1/file | head -c 200; echo
for round in 1 2; do
  echo "round $round baseline"; taskset -c 1 wrk -t1 -c16 -d8s http://127.0.0.1:4711/files/1 | grep -E "Requests/sec|Transfer/sec|Non-2xx"
  echo "round $round restgraph"; taskset -c 1 wrk -t1 -c16 -d8s -H "authorization: Bearer $T" http://127.0.0.1:4712/papers/1/file | grep -E "Requests/sec|Transfer/sec|Non-2xx"
done
kill $B $R; wait 2>/dev/null; cd /; rm -rf $D
