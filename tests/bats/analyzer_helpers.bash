# analyzer_helpers.bash -- what the analyzer's bats files share (loaded by analyzer.bats
# and analyzer_corpus.bats).

# json_get FILE PYTHON_EXPR: evaluate an expression over the JSON document `r`
json_get() {
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
