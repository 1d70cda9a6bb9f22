#!/bin/sh
# Never answers: the timeout must kill it.
sleep 600
