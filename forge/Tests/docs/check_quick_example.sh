#!/usr/bin/env bash
# The quick example in docs/reconstruction.md must be the text QuickExampleTests.cpp compiles: the page's
# code block equals the test's "head" block followed by its "body" block (indentation removed).
# Usage: check_quick_example.sh SOURCE_DIR
set -euo pipefail
src=$1
doc=$src/docs/reconstruction.md
test=$src/forge/Tests/QuickExampleTests.cpp

# The first ```cpp block after the "## Quick example" heading.
from_doc=$(awk '/^## Quick example/ { on = 1; next }
                on && /^```cpp/ { code = 1; next }
                code && /^```/ { exit }
                code { print }' "$doc")
block() {  # lines strictly between "// BEGIN quick example: $1" and "// END quick example: $1", dedented
    awk -v part="$1" '$0 ~ "// BEGIN quick example: " part { on = 1; next }
                      $0 ~ "// END quick example: " part { on = 0 }
                      on { sub(/^    /, ""); print }' "$test"
}
from_test=$(block head; echo; block body)

if [[ -z $from_doc ]]; then
    echo "no \`\`\`cpp block under '## Quick example' in $doc"
    exit 1
fi
if [[ "$from_doc" != "$from_test" ]]; then
    echo "docs/reconstruction.md's quick example differs from forge/Tests/QuickExampleTests.cpp:"
    diff <(echo "$from_doc") <(echo "$from_test") || true
    exit 1
fi
echo "docs/reconstruction.md's quick example is the text QuickExampleTests.cpp compiles"
