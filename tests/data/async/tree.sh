#!/bin/sh
# A config async hook that outlives its timeout with a process tree; pids go to $1.
cat >/dev/null
sleep 60 &
echo $! >> "$1"
setsid sleep 61 &
echo $! >> "$1"
echo $$ >> "$1"
sleep 62
