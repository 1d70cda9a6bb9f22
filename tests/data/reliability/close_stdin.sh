#!/bin/sh
# Closes stdin without reading a byte of a multi-megabyte input, then answers.
exec 0<&-
echo '{"systemMessage": "closed stdin early"}'
