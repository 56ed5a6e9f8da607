"""The privacy accountant's figures and the questions it answers (z, q or T for a target epsilon)."""
