"""The trade-off explorer's controls and figures."""
