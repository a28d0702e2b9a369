#!/usr/bin/env bash
# The quick example in docs/reconstruction.md must be the text QuickExampleTests.cpp compiles (check_doc_example.sh).
# Usage: check_quick_example.sh SOURCE_DIR
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/check_doc_example.sh" "$1" docs/reconstruction.md "## Quick example" \
    forge/Tests/QuickExampleTests.cpp "quick example"
