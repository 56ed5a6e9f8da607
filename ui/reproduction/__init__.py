"""The paper reproduction's view: stored curves beside the paper's claims."""
