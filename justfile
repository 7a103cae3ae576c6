# Recipes mirroring the README; plain cargo works without just.

# Run the bundled demo: scripted model, local SQLite journal, no API key.
demo:
    cargo run --release -- run --demo

# The test suite CI runs.
test:
    bash scripts/test.sh

# Loop overhead, replay time, journal bytes per turn, peak RSS.
bench:
    cargo bench -p reloop-driver --bench loop_overhead
    cargo bench -p reloop-driver --bench replay
    cargo bench -p reloop-driver --bench deltas
    cargo bench -p reloop-driver --bench concurrency

# The property suite, deeper than CI runs it.
props cases="20000":
    PROPTEST_CASES={{cases}} cargo test --release -p reloop-core --test properties
