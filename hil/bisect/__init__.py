"""`./suite bisect`: the first commit that made a case slower, between a known-good and a bad
commit of the DUT's firmware. The suite stays the checkout's; only the firmware changes: each
commit tested is checked out in a git worktree, built (the project's firmware through its own
build scripts, on demand as a run needs its configurations), flashed and measured with
repetitions, and classified against the two ends by their numbers (hil.bisect.verdict).
Commits whose firmware tree is one already measured are not built again."""
