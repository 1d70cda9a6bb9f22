#!/bin/sh
# Output-level async with a short asyncTimeout; leaves a process tree behind
# (a child and a grandchild that left the group with setsid) and records their pids in $1.
cat >/dev/null
echo '{"async": true, "asyncTimeout": 300}'
sleep 60 &
echo $! >> "$1"
setsid sleep 61 &
echo $! >> "$1"
echo $$ >> "$1"
sleep 62
