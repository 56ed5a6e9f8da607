"""The DP-HYPE page's controls and figures."""
