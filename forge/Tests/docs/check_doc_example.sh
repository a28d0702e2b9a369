#!/usr/bin/env bash
# A code example in docs/ must be the text a test compiles: the first ```cpp block after the page's HEADING line
# equals the test file's "head" block followed by an empty line and its "body" block, each block being the lines
# strictly between "// BEGIN NAME: part" and "// END NAME: part" with their common indentation removed.
# Usage: check_doc_example.sh SOURCE_DIR DOC HEADING TEST NAME
#   e.g. check_doc_example.sh . docs/operators.md "## Writing an operator" forge/Tests/DocsOperatorExampleTests.cpp \
#        "operators.md example"
set -euo pipefail
if [[ $# -ne 5 ]]; then
    echo "usage: check_doc_example.sh SOURCE_DIR DOC HEADING TEST NAME" >&2
    exit 2
fi
src=$1
doc=$src/$2
heading=$3
test=$src/$4
name=$5

from_doc=$(awk -v h="$heading" '$0 == h { on = 1; next }
                                on && /^```cpp/ { code = 1; next }
                                code && /^```/ { exit }
                                code { print }' "$doc")
block() {  # one part, dedented by the smallest indentation of its non-empty lines
    awk -v begin="// BEGIN $name: $1" -v end="// END $name: $1" '
        index($0, end) { on = 0 }
        on { line[n++] = $0
             if ($0 ~ /[^ ]/) { match($0, /^ */); if (min == "" || RLENGTH < min) min = RLENGTH } }
        index($0, begin) { on = 1 }
        END { for (i = 0; i < n; i++) print substr(line[i], min + 1) }' "$test"
}
from_test=$(block head; echo; block body)

if [[ -z $from_doc ]]; then
    echo "no \`\`\`cpp block under '$heading' in $2"
    exit 1
fi
if [[ -z $(block head) || -z $(block body) ]]; then
    echo "no '// BEGIN $name: head' or '// BEGIN $name: body' block in $4"
    exit 1
fi
if [[ "$from_doc" != "$from_test" ]]; then
    echo "$2's example under '$heading' differs from $4 (< page, > test):"
    diff <(echo "$from_doc") <(echo "$from_test") || true
    exit 1
fi
echo "$2's example under '$heading' is the text $4 compiles"
