# The commands a newcomer types (README, "The two commands", and `make docs`); each does its own
# set-up through .ci/setup. CI runs .ci/run, which runs the same .ci/test and .ci/docs.
.DEFAULT_GOAL := help
.PHONY: help wordcount test docs

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z]+:.*## / {printf "  make %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

wordcount: ## count the words of the bundled corpus; draw the plan with its figures, write the report (in out/)
	@bash .ci/wordcount $(ARGS)

test: ## run the tests (pytest arguments in ARGS, e.g. make test ARGS='-m "not spark"')
	@bash .ci/test $(ARGS)

docs: ## build the documentation site offline into docs/_build/html (sphinx-build arguments in ARGS)
	@bash .ci/docs $(ARGS)
