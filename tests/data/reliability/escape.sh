#!/bin/sh
# The documented escape: scrub the environment AND leave the process group.
# $1: where to write the escaped process's pid.
env -i setsid sh -c 'echo $$ > "$0"; exec sleep 60' "$1" </dev/null >/dev/null 2>&1 &
sleep 0.3
exit 0
