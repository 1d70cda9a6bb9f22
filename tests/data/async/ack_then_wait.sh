#!/bin/sh
# Output-level async: acknowledge on the first stdout line, then wait for a go file
# ($1) and write a done file ($2).  Backgrounding must not wait for the go file.
cat >/dev/null
echo '{"async": true, "asyncTimeout": 20000}'
while [ ! -e "$1" ]; do sleep 0.02; done
echo "after the ack"
echo done > "$2"
