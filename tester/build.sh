#!/bin/sh
# Builds the bench's frame tester (tester/frametester.c), the model device of the RFC 2544
# family's own tests (tester/modelbox.c) and the DUT core's finer tick (tester/coreticker.c) into
# tester/build/.
set -eu
cd "$(dirname "$0")"
mkdir -p build
for tool in frametester modelbox coreticker; do
  ${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -o "build/$tool.new" "$tool.c" -lm
  mv "build/$tool.new" "build/$tool"
done
