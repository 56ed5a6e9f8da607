"""The privacy audit's controls, figures and the panel other pages embed."""
