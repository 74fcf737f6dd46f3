"""Sleeps 60 s at import: the import times out once and every Python exercise says so; the kernel is graded."""

SCORES = {"compute_dk": 0, "scale_scores": 0, "apply_causal_mask": 0, "row_softmax": 0, "weighted_sum": 0,
          "causal_attention": 0}
HINT = "timed out after"
PRELUDE = '''
import time
time.sleep(60)
'''
