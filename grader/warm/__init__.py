"""A warm grading process for the student's edit-run loop (`make grade`, `make grade EX=...`, a notebook's test cell).

A grading's own overhead (starting Python twice, importing numpy, pytest and the grader, starting pytest) is
larger than the student's compute for one exercise. `python -m grader grade --warm` (what `make grade` runs; a
notebook's test cell runs `cell --warm`) asks a server kept running between gradings (server.py) to grade: the
server has imported everything once and forks one fresh process per grading, which takes over the client's
terminal (its stdin, stdout and stderr, passed over a Unix socket) and runs the same command a cold process would.
The student's code still runs in a fresh boxed worker per grading, so nothing of one grading reaches the next.

client.py: the side `python -m grader grade --warm` runs, before anything heavy is imported.
server.py: `python -m grader warm-server`, started in the background by the first `--warm` grading.
address.py: where the server listens, and the key that tells a server it no longer matches the checkout.
"""
