# The two commands of the README. Both run scripts/setup.sh first (fast when nothing changed).
.PHONY: run test setup lint bench clean

run: setup
	@scripts/run.sh $(ARGS)

test: setup
	@scripts/run_tests.sh

setup:
	@scripts/setup.sh

lint: setup
	@.venv/bin/ruff check spot_driver spot_sim test scripts benchmarks launch

bench: setup
	@scripts/run_benchmarks.sh

clean:
	rm -rf build install log .work
