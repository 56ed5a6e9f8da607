"""Landing page of the DP-BO Explorer (placeholder until the dashboard issue lands)."""

import streamlit as st

st.set_page_config(page_title="DP-BO Explorer", layout="wide")
st.title("DP-BO Explorer")
st.write("Private federated Bayesian optimisation and private hyperparameter search.")
