"""The PO-GP-UCB page's controls and figures."""
